import { Migration } from '@mikro-orm/migrations';

const LISTED = ['virtual_devices', 'digital_twins'] as const;
/** The columns the lists order by with a cursor (title, device id, creation time): see `changes`. */
const ORDERED_BY: Record<(typeof LISTED)[number], string[]> = {
  virtual_devices: ['title', 'device_id', 'created_at'],
  digital_twins: ['title', 'created_at'],
};

/**
 * The exact number of devices and twins of each account, kept by triggers for every writer
 * (docs/adr/0136-exact-list-totals.md): an unfiltered list reads its total from one row instead of
 * estimating it, and pages past the middle of the account from its end.
 * - A statement trigger on insert and one on delete add and subtract per account (one upsert per
 *   statement, accounts in key order so two writers cannot deadlock on them).
 * - A row trigger on updates of `account_id` moves a row's count; it runs only when that column is
 *   in the update and changed (the WHEN clause is evaluated before any function is called).
 * - `changes` counts every change of an account's rows that can move a row in a list's order: the
 *   inserts, deletes and moves above, and updates of the columns the lists order by with a cursor
 *   (a row trigger whose WHEN clause compares them). Positions remembered at one value (the anchors
 *   of a page by number, list-anchors.ts) hold while it stays.
 * No foreign key to accounts: deleting an account deletes its rows first, whose trigger writes here.
 */
export class Migration20261201100000_list_row_counts extends Migration {
  override async up(): Promise<void> {
    // Writers (another node of a cluster) wait until the counts and their triggers are in place.
    this.addSql(`lock table ${LISTED.map((t) => `"${t}"`).join(', ')} in share row exclusive mode;`);
    this.addSql(`create table "list_row_counts" (
      "table_name" text not null,
      "account_id" uuid not null,
      "n" bigint not null,
      "changes" bigint not null default 0,
      primary key ("table_name", "account_id"));`);
    // Each adds its rows to the counts (n) and counts one change of the order (changes).
    const counting = (name: string, rows: string) =>
      `create function "${name}"() returns trigger language plpgsql as $$
      begin
        insert into list_row_counts (table_name, account_id, n)
        ${rows}
        on conflict (table_name, account_id) do update
          set n = list_row_counts.n + excluded.n, changes = list_row_counts.changes + 1;
        return null;
      end $$;`;
    this.addSql(
      counting(
        'list_row_counts_added',
        'select tg_table_name, account_id, count(*) from added group by account_id order by account_id',
      ),
    );
    this.addSql(
      counting(
        'list_row_counts_removed',
        'select tg_table_name, account_id, -count(*) from removed group by account_id order by account_id',
      ),
    );
    // Both accounts in key order, as the statement triggers upsert theirs.
    this.addSql(
      counting(
        'list_row_counts_moved',
        `values (tg_table_name, least(old.account_id, new.account_id),
                 case when old.account_id < new.account_id then -1 else 1 end),
                (tg_table_name, greatest(old.account_id, new.account_id),
                 case when old.account_id < new.account_id then 1 else -1 end)`,
      ),
    );
    this.addSql(`create function "list_row_counts_reordered"() returns trigger language plpgsql as $$
      begin
        insert into list_row_counts (table_name, account_id, n) values (tg_table_name, new.account_id, 0)
        on conflict (table_name, account_id) do update set changes = list_row_counts.changes + 1;
        return null;
      end $$;`);
    for (const table of LISTED) {
      const ordered = ORDERED_BY[table];
      this.addSql(`insert into "list_row_counts" ("table_name", "account_id", "n")
        select '${table}', "account_id", count(*) from "${table}" group by "account_id";`);
      this.addSql(`create trigger "${table}_row_counts_added" after insert on "${table}"
        referencing new table as added for each statement execute function "list_row_counts_added"();`);
      this.addSql(`create trigger "${table}_row_counts_removed" after delete on "${table}"
        referencing old table as removed for each statement execute function "list_row_counts_removed"();`);
      this.addSql(`create trigger "${table}_row_counts_moved" after update of "account_id" on "${table}"
        for each row when (old.account_id is distinct from new.account_id)
        execute function "list_row_counts_moved"();`);
      this.addSql(`create trigger "${table}_row_counts_reordered"
        after update of ${ordered.map((c) => `"${c}"`).join(', ')} on "${table}" for each row
        when (old.account_id = new.account_id
          and (${ordered.map((c) => `old.${c} is distinct from new.${c}`).join(' or ')}))
        execute function "list_row_counts_reordered"();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of LISTED) {
      this.addSql(`drop trigger if exists "${table}_row_counts_reordered" on "${table}";`);
      this.addSql(`drop trigger if exists "${table}_row_counts_moved" on "${table}";`);
      this.addSql(`drop trigger if exists "${table}_row_counts_removed" on "${table}";`);
      this.addSql(`drop trigger if exists "${table}_row_counts_added" on "${table}";`);
    }
    this.addSql(`drop function if exists "list_row_counts_reordered"();`);
    this.addSql(`drop function if exists "list_row_counts_moved"();`);
    this.addSql(`drop function if exists "list_row_counts_removed"();`);
    this.addSql(`drop function if exists "list_row_counts_added"();`);
    this.addSql(`drop table if exists "list_row_counts";`);
  }
}
