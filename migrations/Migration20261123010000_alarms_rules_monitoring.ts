import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 6, sections 1-3: the alarm log, smart groups and alarm reports, connector monitoring
 * rules, rules and their per-twin edge state (rule_twin_states).
 */
export class Migration20261123010000_alarms_rules_monitoring extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "alarm_logs" ("id" uuid not null, "account_id" uuid not null, "category" varchar(100) not null, "message" text not null, "reference_type" varchar(40) null, "reference_id" uuid null, "source_kind" varchar(40) null, "source_id" uuid null, "status" varchar(20) not null default 'open', "acknowledged_by" uuid null, "acknowledged_at" timestamptz null, "closed_by" uuid null, "closed_at" timestamptz null, "details" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "alarm_logs_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "alarm_logs_account_id_created_at_index" on "alarm_logs" ("account_id", "created_at");`,
    );
    this.addSql(
      `create index "alarm_logs_reference_type_reference_id_index" on "alarm_logs" ("reference_type", "reference_id");`,
    );
    this.addSql(
      `create table "connector_monitoring_rules" ("id" uuid not null, "account_id" uuid not null, "connector_id" uuid not null, "title" varchar(200) not null, "type" varchar(40) not null, "params" jsonb not null, "active" boolean not null default true, "mail_connector_id" uuid null, "mail_to" text[] not null, "state" jsonb not null, "last_fired_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "connector_monitoring_rules_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "connector_monitoring_rules_account_id_index" on "connector_monitoring_rules" ("account_id");`,
    );
    this.addSql(
      `create index "connector_monitoring_rules_connector_id_index" on "connector_monitoring_rules" ("connector_id");`,
    );
    this.addSql(
      `create index "connector_monitoring_rules_mail_connector_id_index" on "connector_monitoring_rules" ("mail_connector_id");`,
    );
    this.addSql(
      `create table "rules" ("id" uuid not null, "account_id" uuid not null, "twin_id" uuid null, "title" varchar(200) not null, "description" text not null default '', "active" boolean not null default true, "trigger" jsonb not null, "commands" jsonb not null, "next_run_at" timestamptz null, "schedule_anchor" timestamptz not null, "last_fired_at" timestamptz null, "last_run" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "rules_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "rules_account_id_index" on "rules" ("account_id");`,
    );
    this.addSql(
      `create index "rules_twin_id_index" on "rules" ("twin_id");`,
    );
    this.addSql(
      `create index "rules_next_run_at_index" on "rules" ("next_run_at");`,
    );
    this.addSql(
      `create table "rule_twin_states" ("id" uuid not null, "rule_id" uuid not null, "twin_id" uuid not null, "matched" boolean null, "inside" boolean null, "updated_at" timestamptz not null, constraint "rule_twin_states_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "rule_twin_states_twin_id_index" on "rule_twin_states" ("twin_id");`,
    );
    this.addSql(
      `alter table "rule_twin_states" add constraint "rule_twin_states_rule_id_twin_id_unique" unique ("rule_id", "twin_id");`,
    );
    this.addSql(
      `create table "smart_groups" ("id" uuid not null, "account_id" uuid not null, "title" varchar(200) not null, "target" varchar(20) not null default 'device', "filter" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "smart_groups_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "smart_groups_account_id_index" on "smart_groups" ("account_id");`,
    );
    this.addSql(
      `create table "alarm_reports" ("id" uuid not null, "account_id" uuid not null, "smart_group_id" uuid not null, "title" varchar(200) not null, "schedule" jsonb null, "alarm_health_states" text[] not null, "mail_connector_id" uuid null, "mail_to" text[] not null, "next_run_at" timestamptz null, "schedule_anchor" timestamptz not null, "last_run_at" timestamptz null, "last_result" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "alarm_reports_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "alarm_reports_account_id_index" on "alarm_reports" ("account_id");`,
    );
    this.addSql(
      `create index "alarm_reports_smart_group_id_index" on "alarm_reports" ("smart_group_id");`,
    );
    this.addSql(
      `create index "alarm_reports_mail_connector_id_index" on "alarm_reports" ("mail_connector_id");`,
    );
    this.addSql(
      `create index "alarm_reports_next_run_at_index" on "alarm_reports" ("next_run_at");`,
    );
    this.addSql(
      `alter table "alarm_logs" add constraint "alarm_logs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "connector_monitoring_rules" add constraint "connector_monitoring_rules_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "connector_monitoring_rules" add constraint "connector_monitoring_rules_connector_id_foreign" foreign key ("connector_id") references "connectors" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "connector_monitoring_rules" add constraint "connector_monitoring_rules_mail_connector_id_foreign" foreign key ("mail_connector_id") references "connectors" ("id") on update cascade on delete restrict;`,
    );
    this.addSql(
      `alter table "rules" add constraint "rules_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "rules" add constraint "rules_twin_id_foreign" foreign key ("twin_id") references "digital_twins" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "rule_twin_states" add constraint "rule_twin_states_rule_id_foreign" foreign key ("rule_id") references "rules" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "rule_twin_states" add constraint "rule_twin_states_twin_id_foreign" foreign key ("twin_id") references "digital_twins" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "smart_groups" add constraint "smart_groups_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "alarm_reports" add constraint "alarm_reports_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "alarm_reports" add constraint "alarm_reports_smart_group_id_foreign" foreign key ("smart_group_id") references "smart_groups" ("id") on update cascade on delete restrict;`,
    );
    this.addSql(
      `alter table "alarm_reports" add constraint "alarm_reports_mail_connector_id_foreign" foreign key ("mail_connector_id") references "connectors" ("id") on update cascade on delete restrict;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rule_twin_states" cascade;`);
    this.addSql(`drop table if exists "rules" cascade;`);
    this.addSql(`drop table if exists "connector_monitoring_rules" cascade;`);
    this.addSql(`drop table if exists "alarm_reports" cascade;`);
    this.addSql(`drop table if exists "smart_groups" cascade;`);
    this.addSql(`drop table if exists "alarm_logs" cascade;`);
  }
}
