import { Migration } from '@mikro-orm/migrations';

/**
 * Large job inputs (an uploaded CSV file, as record batches) in numbered pieces beside the job
 * (docs/adr/0063-imports-off-the-main-thread.md); deleted with the job or when it ends.
 */
export class Migration20261125224420_job_attachments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "job_attachments" ("job_id" uuid not null, "seq" int not null, "content" text not null, constraint "job_attachments_pkey" primary key ("job_id", "seq"));`);
    this.addSql(`alter table "job_attachments" add constraint "job_attachments_job_id_foreign" foreign key ("job_id") references "jobs" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "job_attachments" cascade;`);
  }
}
