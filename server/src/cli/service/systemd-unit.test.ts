import { describe, expect, it } from 'vitest';
import { readUnitTemplate, systemdUnit, winswConfig } from './systemd-unit.js';

describe('systemd unit for stellwerk service install', () => {
  it("is the package's unit with this installation's command, user and data directory", () => {
    const unit = systemdUnit(readUnitTemplate(), {
      execStart: '/usr/bin/stellwerk start',
      user: 'iot',
      dataDir: '/var/lib/stellwerk',
    });
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/stellwerk start$/m);
    expect(unit).toMatch(/^User=iot$/m);
    expect(unit).toMatch(/^Group=iot$/m);
    expect(unit).toMatch(/^Environment=STELLWERK_DATA_DIR=\/var\/lib\/stellwerk$/m);
    expect(unit).not.toMatch(/ReadWritePaths/);
    expect(unit.match(/^ExecStart=/gm)).toHaveLength(1);
  });

  it('lets the server write a data directory outside the state directory (ProtectSystem=strict)', () => {
    const unit = systemdUnit(readUnitTemplate(), {
      execStart: 'x',
      user: 'iot',
      dataDir: '/srv/stellwerk data',
    });
    expect(unit).toMatch(/^Environment=STELLWERK_DATA_DIR="\/srv\/stellwerk data"$/m);
    expect(unit).toMatch(/^ReadWritePaths="\/srv\/stellwerk data"$/m);
  });

  it('has a WinSW file for Windows that runs stellwerk start', () => {
    const xml = winswConfig({
      stellwerkCmd: 'C:\\Stellwerk\\stellwerk.cmd',
      dataDir: 'C:\\ProgramData\\Stellwerk',
    });
    expect(xml).toContain('<executable>C:\\Stellwerk\\stellwerk.cmd</executable>');
    expect(xml).toContain('<arguments>start</arguments>');
  });
});
