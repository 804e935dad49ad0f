import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003711_user_invitations extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "user_invitations" ("id" uuid not null, "user_id" uuid not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "accepted_at" timestamptz null, "created_at" timestamptz not null, constraint "user_invitations_pkey" primary key ("id"));`);
    this.addSql(`create index "user_invitations_user_id_index" on "user_invitations" ("user_id");`);
    this.addSql(`alter table "user_invitations" add constraint "user_invitations_token_hash_unique" unique ("token_hash");`);

    this.addSql(`alter table "user_invitations" add constraint "user_invitations_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "user_invitations" cascade;`);
  }

}
