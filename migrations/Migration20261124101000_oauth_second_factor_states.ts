import { Migration } from '@mikro-orm/migrations';

/** Federated logins waiting for the user's Stellwerk code (docs/adr/0031), for 5 minutes each. */
export class Migration20261124101000_oauth_second_factor_states extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "oauth_second_factor_states" ("token_hash" varchar(64) not null, "user_id" uuid not null, "link_issuer" varchar(500) null, "link_subject" varchar(500) null, "return_to" varchar(2000) not null default '/', "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "oauth_second_factor_states_pkey" primary key ("token_hash"));`);
    this.addSql(`create index "oauth_second_factor_states_user_id_index" on "oauth_second_factor_states" ("user_id");`);
    this.addSql(`create index "oauth_second_factor_states_expires_at_index" on "oauth_second_factor_states" ("expires_at");`);
    this.addSql(`alter table "oauth_second_factor_states" add constraint "oauth_second_factor_states_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "oauth_second_factor_states" cascade;`);
  }
}
