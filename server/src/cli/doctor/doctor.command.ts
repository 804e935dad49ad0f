import { configReport, settingsFileNote } from '../../config-report.js';
import type { Config } from '../../config.js';
import { VERSION } from '../../version.js';
import { assertKnownOptions, cliConfig, errorText, flag, option } from '../cli-runtime.js';
import { CliError, type CliCommand } from '../command.js';
import type { DoctorCheck, DoctorFinding } from '../doctor-check.js';

/**
 * `stellwerk doctor`: runs every registered check against the configuration the server would use,
 * then shows that configuration with each value's source. Exits 1 when any check fails, 0 when all
 * pass (warnings included). A check that throws is itself a failure, so doctor always finishes.
 */

const SYMBOL = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

async function runChecks(checks: readonly DoctorCheck[], config: Config): Promise<DoctorFinding[]> {
  const findings: DoctorFinding[] = [];
  for (const check of checks) {
    try {
      const result = await check.run(config);
      findings.push(...(Array.isArray(result) ? result : [result]));
    } catch (error) {
      findings.push({
        check: check.name,
        status: 'fail',
        message: `the check itself failed: ${errorText(error)}`,
      });
    }
  }
  return findings;
}

export function doctorCommand(checks: readonly DoctorCheck[]): CliCommand {
  const names = checks.map((c) => c.name);
  return {
    name: 'doctor',
    summary: 'Check this installation (ports, data directory, disk, database, spool, clock …)',
    usage: [
      'Usage: stellwerk doctor [--json] [--only CHECK[,CHECK…]]',
      '',
      `Checks: ${names.join(', ')}.`,
      'Then lists every setting with its effective value and where it came from (environment,',
      'stellwerk.conf or default), secrets masked. Exits 1 when a check fails; warnings do not.',
      '',
      '  --json   one JSON document: {version, ok, findings, settings}',
      '  --only   run only these checks',
    ].join('\n'),
    async run(args, io) {
      assertKnownOptions(args, { flags: ['json'], values: ['only'] });
      const only = option(args, 'only')
        ?.split(',')
        .map((s) => s.trim());
      const unknown = only?.filter((n) => !names.includes(n)) ?? [];
      if (unknown.length)
        throw new CliError(`unknown check ${unknown.join(', ')}; checks are ${names.join(', ')}`, 2);
      const config = cliConfig(io);
      const findings = await runChecks(only ? checks.filter((c) => only.includes(c.name)) : checks, config);
      const ok = !findings.some((f) => f.status === 'fail');
      const settings = configReport(config);
      if (flag(args, 'json')) {
        io.out(
          JSON.stringify(
            { version: VERSION, ok, findings, settingsFile: config.origin.settingsFile, settings },
            null,
            2,
          ),
        );
        return ok ? 0 : 1;
      }
      io.out(`Stellwerk ${VERSION}, data directory ${config.dataDir}`);
      io.out('');
      for (const f of findings) io.out(`[${SYMBOL[f.status]}] ${f.check.padEnd(10)} ${f.message}`);
      io.out('');
      io.out(`Settings (file: ${settingsFileNote(config)}):`);
      const width = Math.max(...settings.map((s) => s.name.length));
      for (const s of settings) io.out(`  ${s.name.padEnd(width)}  ${s.source.padEnd(7)}  ${s.value}`);
      io.out('');
      const failed = findings.filter((f) => f.status === 'fail').length;
      const warned = findings.filter((f) => f.status === 'warn').length;
      io.out(
        ok
          ? `doctor: no failures${warned ? `, ${warned} warning(s)` : ''}`
          : `doctor: ${failed} failure(s), ${warned} warning(s)`,
      );
      return ok ? 0 : 1;
    },
  };
}
