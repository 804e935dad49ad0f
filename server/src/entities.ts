import { AccountSchema } from './accounts/account.entity.js';
import { AnnouncementSchema, AnnouncementStateSchema } from './accounts/announcement.entity.js';
import { ApiKeySchema } from './api-keys/api-key.entity.js';
import { AuditEventSchema } from './audit/audit-event.entity.js';
import { SitePlanImageSchema, SitePlanSchema } from './maps/site-plan.entity.js';
import { GatewayDeviceSchema, GatewayReceptionHourSchema, GatewaySchema } from './gateways/gateway.entity.js';
import { LoginThrottleSchema, SessionSchema } from './auth/session.entity.js';
import { OAuthLoginStateSchema } from './auth/oidc/login-state.entity.js';
import { OAuthSecondFactorStateSchema } from './auth/oidc/second-factor-state.entity.js';
import { ServerNodeSchema } from './health/node.entity.js';
import { PermissionScopeSchema } from './permission-scopes/permission-scope.entity.js';
import { RoleSchema } from './roles/role.entity.js';
import { SystemSettingSchema } from './setup/system-setting.entity.js';
import { FederatedIdentitySchema, RecoveryCodeSchema, UserSchema } from './users/user.entity.js';
import { UserInvitationSchema } from './users/invitation.entity.js';

import {
  ConnectorLogSchema,
  ConnectorPacketMinuteSchema,
  ConnectorSchema,
} from './connectors/connector.entity.js';
import { DeviceStateSchema, VirtualDeviceSchema } from './devices/virtual-device.entity.js';
import { DeviceDriverSchema } from './drivers/device-driver.entity.js';
import { DownlinkSchema } from './downlinks/downlink.entity.js';
import { PacketSchema } from './ingest/packet.entity.js';
import { JobAttachmentSchema } from './jobs/job-attachment.entity.js';
import { JobSchema } from './jobs/job.entity.js';
import { DeviceTemplateSchema } from './templates/device-template.entity.js';
import { DashboardSchema } from './dashboards/dashboard.entity.js';
import { DashboardShareSchema } from './dashboards/dashboard-share.entity.js';
import { DataStateSchema } from './states/data-state.entity.js';
import { DigitalTwinSchema } from './twins/digital-twin.entity.js';
import { AlarmLogSchema } from './alarms/alarm-log.entity.js';
import { AlarmReportSchema, SmartGroupSchema } from './alarms/smart-group.entity.js';
import { ExportPlanSchema } from './exports/export-plan.entity.js';
import { ConnectorMonitoringRuleSchema } from './connector-monitoring/connector-monitoring-rule.entity.js';
import { RuleSchema, RuleTwinStateSchema } from './rules/rule.entity.js';
import {
  FlowFilterSchema,
  FlowTransformerSchema,
  IntegrationFlowRunSchema,
  IntegrationFlowSchema,
} from './flows/flow.entities.js';

/** Every entity schema; MikroORM discovers exactly these. */
export const ENTITIES = [
  SitePlanSchema,
  SitePlanImageSchema,
  ConnectorSchema,
  ConnectorLogSchema,
  ConnectorPacketMinuteSchema,
  DeviceDriverSchema,
  DeviceTemplateSchema,
  VirtualDeviceSchema,
  DeviceStateSchema,
  DownlinkSchema,
  PacketSchema,
  JobSchema,
  JobAttachmentSchema,
  DigitalTwinSchema,
  DataStateSchema,
  DashboardSchema,
  DashboardShareSchema,
  AlarmLogSchema,
  SmartGroupSchema,
  AlarmReportSchema,
  ExportPlanSchema,
  ConnectorMonitoringRuleSchema,
  RuleSchema,
  RuleTwinStateSchema,
  IntegrationFlowSchema,
  IntegrationFlowRunSchema,
  FlowFilterSchema,
  FlowTransformerSchema,
  AccountSchema,
  AnnouncementSchema,
  AnnouncementStateSchema,
  ApiKeySchema,
  SessionSchema,
  LoginThrottleSchema,
  ServerNodeSchema,
  PermissionScopeSchema,
  RoleSchema,
  SystemSettingSchema,
  UserSchema,
  RecoveryCodeSchema,
  FederatedIdentitySchema,
  UserInvitationSchema,
  OAuthLoginStateSchema,
  AuditEventSchema,
  OAuthSecondFactorStateSchema,
  GatewaySchema,
  GatewayReceptionHourSchema,
  GatewayDeviceSchema,
];
