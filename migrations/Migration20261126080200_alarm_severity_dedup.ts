import { Migration } from '@mikro-orm/migrations';

/**
 * Alarms get a severity (with a rank to sort by), an occurrence count and last-seen time, and a
 * record of why and by what they were closed. One open entry per source and reference: a partial
 * unique index makes concurrent writers fold a repeat occurrence into the open entry. Entries that
 * already duplicate each other are merged first: the newest one keeps the count of its group, the
 * older ones are closed with reason `merged`.
 */
export class Migration20261126080200_alarm_severity_dedup extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "alarm_logs"
         add column "severity" varchar(20) not null default 'warning',
         add column "severity_rank" smallint not null default 2,
         add column "occurrence_count" integer not null default 1,
         add column "last_seen_at" timestamptz null,
         add column "close_reason" varchar(20) null,
         add column "cleared_by_kind" varchar(40) null,
         add column "cleared_by_id" uuid null;`,
    );
    this.addSql(`update "alarm_logs" set "last_seen_at" = "created_at";`);
    this.addSql(`update "alarm_logs" set "close_reason" = 'manual' where "status" = 'closed';`);
    this.addSql(`alter table "alarm_logs" alter column "last_seen_at" set not null;`);
    this.addSql(
      `with ranked as (
         select id, count(*) over w as n, row_number() over (w order by created_at desc, id desc) as pos
           from "alarm_logs"
          where status <> 'closed' and source_kind is not null and source_id is not null
         window w as (partition by account_id, source_kind, source_id, coalesce(reference_type, ''),
                      coalesce(reference_id, '00000000-0000-0000-0000-000000000000'::uuid)))
       update "alarm_logs" a
          set occurrence_count = case when r.pos = 1 then r.n else a.occurrence_count end,
              status = case when r.pos = 1 then a.status else 'closed' end,
              closed_at = case when r.pos = 1 then a.closed_at else now() end,
              close_reason = case when r.pos = 1 then a.close_reason else 'merged' end
         from ranked r
        where a.id = r.id and r.n > 1;`,
    );
    this.addSql(
      `create unique index "alarm_logs_open_source_unique" on "alarm_logs"
         ("account_id", "source_kind", "source_id", coalesce("reference_type", ''),
          coalesce("reference_id", '00000000-0000-0000-0000-000000000000'::uuid))
         where "status" <> 'closed' and "source_kind" is not null and "source_id" is not null;`,
    );
    this.addSql(
      `create index "alarm_logs_account_id_severity_rank_index" on "alarm_logs" ("account_id", "severity_rank");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "alarm_logs_account_id_severity_rank_index";`);
    this.addSql(`drop index "alarm_logs_open_source_unique";`);
    this.addSql(
      `alter table "alarm_logs"
         drop column "severity", drop column "severity_rank", drop column "occurrence_count",
         drop column "last_seen_at", drop column "close_reason", drop column "cleared_by_kind",
         drop column "cleared_by_id";`,
    );
  }
}
