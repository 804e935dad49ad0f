import { Migration } from '@mikro-orm/migrations';

/** The audit log (server/src/audit/): security-relevant changes per account, append-only. */
export class Migration20261124100000_audit_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "audit_events" ("id" uuid not null, "occurred_at" timestamptz not null, "account_id" uuid not null, "actor_kind" varchar(16) not null, "actor_id" uuid null, "actor_account_id" uuid null, "action" varchar(100) not null, "target_type" varchar(40) null, "target_id" varchar(100) null, "details" jsonb not null, constraint "audit_events_pkey" primary key ("id"));`);
    this.addSql(`create index "audit_events_account_id_occurred_at_index" on "audit_events" ("account_id", "occurred_at");`);
    this.addSql(`alter table "audit_events" add constraint "audit_events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "audit_events" cascade;`);
  }
}
