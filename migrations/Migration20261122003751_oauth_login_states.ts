import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003751_oauth_login_states extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "oauth_login_states" ("state_hash" varchar(64) not null, "account_id" uuid not null, "binding_hash" varchar(64) not null, "code_verifier" varchar(128) not null, "nonce" varchar(128) null, "return_to" varchar(2000) not null default '/', "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "oauth_login_states_pkey" primary key ("state_hash"));`);
    this.addSql(`create index "oauth_login_states_account_id_index" on "oauth_login_states" ("account_id");`);
    this.addSql(`create index "oauth_login_states_expires_at_index" on "oauth_login_states" ("expires_at");`);

    this.addSql(`alter table "oauth_login_states" add constraint "oauth_login_states_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "oauth_login_states" cascade;`);
  }

}
