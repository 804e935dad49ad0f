import { ADMIN_COMMANDS } from '../auth/admin-recovery.command.js';
import { backupCommand, restoreCommand } from '../backup/backup.commands.js';
import { lastBackupCheck } from '../backup/backup.doctor.js';
import { guardUpgradeBeforeMigrating, recordRunningVersion } from '../backup/upgrade-guard.js';
import { httpsCertificateCheck } from '../platform/tls/https-certificate.check.js';
import { configCommand, startCommand, versionCommand } from './basic.commands.js';
import type { CliCommand } from './command.js';
import { databaseCheck } from './doctor/database.check.js';
import { dataDirCheck } from './doctor/data-dir.check.js';
import { doctorCommand } from './doctor/doctor.command.js';
import type { DoctorCheck } from './doctor-check.js';
import { portsCheck } from './doctor/ports.check.js';
import { spoolCheck } from './doctor/spool.check.js';
import { migrateCommand } from './migrate.command.js';
import { serviceCommands } from './service/service.commands.js';

/**
 * The one list of `stellwerk` doctor checks, in the order they run: cheap local checks first, the
 * database (which may start the embedded cluster) last.
 */
export const DOCTOR_CHECKS: DoctorCheck[] = [
  portsCheck,
  dataDirCheck,
  spoolCheck,
  httpsCertificateCheck,
  lastBackupCheck,
  databaseCheck,
];

/** The one list of `stellwerk` commands, in the order `stellwerk --help` shows them. */
export const COMMANDS: CliCommand[] = [
  startCommand,
  migrateCommand({
    beforeMigrate: guardUpgradeBeforeMigrating,
    afterMigrate: ({ databaseUrl }) => recordRunningVersion(databaseUrl),
  }),
  ...ADMIN_COMMANDS,
  backupCommand,
  restoreCommand,
  doctorCommand(DOCTOR_CHECKS),
  configCommand,
  ...serviceCommands(),
  versionCommand,
];
