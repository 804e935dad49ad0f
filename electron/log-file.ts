import fs from 'node:fs';
import path from 'node:path';

/**
 * The desktop's log: what a server started by the app printed, plus the shell's own notes, in
 * one file the tray's "Show Logs" opens. Without it that output would go to a console nobody
 * sees on Windows or macOS. One previous run is kept as `<name>.1`; a file that grows past
 * `maxBytes` during a run is rotated the same way, so the log never fills the disk.
 */
export interface LogFile {
  file: string;
  write(line: string): void;
  close(): void;
}

export const DEFAULT_LOG_MAX_BYTES = 10 * 1024 * 1024;

export function openLogFile(dir: string, name: string, maxBytes = DEFAULT_LOG_MAX_BYTES): LogFile {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const rotate = () => {
    if (fs.existsSync(file)) fs.renameSync(file, `${file}.1`);
  };
  rotate();
  let size = 0;
  let fd = fs.openSync(file, 'a');
  return {
    file,
    write: (line) => {
      // Synchronous on purpose: the last lines before a crash must be in the file.
      const text = `${new Date().toISOString()} ${line}\n`;
      const bytes = Buffer.byteLength(text);
      if (size + bytes > maxBytes && size > 0) {
        fs.closeSync(fd);
        rotate();
        fd = fs.openSync(file, 'a');
        size = 0;
      }
      fs.writeSync(fd, text);
      size += bytes;
    },
    close: () => fs.closeSync(fd),
  };
}
