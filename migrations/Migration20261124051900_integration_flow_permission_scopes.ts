import { Migration } from '@mikro-orm/migrations';

/**
 * Integration flows record the permission scopes of whoever saved them last and take only packets
 * and alarm entries of those scopes (docs/integration-flows.md). Existing flows: null, unrestricted.
 */
export class Migration20261124051900_integration_flow_permission_scopes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "integration_flows" add column "permission_scope_ids" uuid[] null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "integration_flows" drop column if exists "permission_scope_ids";`);
  }
}
