/**
 * The settings window's page: fills the form from the main process and sends it back. All
 * checks happen in the main process (settings-form.ts); this page only shows their messages.
 * A classic script (no imports): the page is a local file with a strict CSP, and its only way
 * out is `window.stellwerkSettings` from settings-preload.cts.
 */

type Field = 'httpPort' | 'mqttPort' | 'dataDir' | 'publicUrl' | 'https' | 'certFile' | 'keyFile';

interface SettingsView {
  values: Record<Field, string>;
  fromEnvironment: Field[];
  confFile: string;
}

type SaveReply =
  { ok: true; message: string } | { ok: false; errors?: Partial<Record<Field, string>>; message?: string };

interface SettingsBridge {
  load(): Promise<SettingsView>;
  save(values: Record<Field, string>): Promise<SaveReply>;
  choosePath(kind: 'folder' | 'file'): Promise<string | null>;
}

const bridge = (window as unknown as { stellwerkSettings: SettingsBridge }).stellwerkSettings;
const form = document.querySelector<HTMLFormElement>('#settings')!;
const statusLine = document.querySelector<HTMLElement>('#status')!;
const TEXT_FIELDS: Field[] = ['httpPort', 'mqttPort', 'dataDir', 'publicUrl', 'certFile', 'keyFile'];

const input = (name: Field) => form.elements.namedItem(name) as HTMLInputElement;
const radios = () => Array.from(form.querySelectorAll<HTMLInputElement>('input[name="https"]'));

function showStatus(text: string, failed = false): void {
  statusLine.textContent = text;
  statusLine.classList.toggle('failed', failed);
}

function showErrors(errors: Partial<Record<Field, string>>): void {
  for (const element of Array.from(form.querySelectorAll<HTMLElement>('.error[data-for]'))) {
    const field = element.dataset.for as Field;
    element.textContent = errors[field] ?? '';
  }
}

function syncFileFields(): void {
  const files = radios().find((r) => r.checked)?.value === 'files';
  for (const name of ['certFile', 'keyFile'] as const) {
    if (!input(name).readOnly) input(name).disabled = !files;
  }
}

function read(): Record<Field, string> {
  const values = Object.fromEntries(TEXT_FIELDS.map((f) => [f, input(f).value])) as Record<Field, string>;
  values.https = radios().find((r) => r.checked)?.value ?? '';
  return values;
}

async function load(): Promise<void> {
  const view = await bridge.load();
  document.querySelector('#confFile')!.textContent = view.confFile;
  for (const field of TEXT_FIELDS) {
    input(field).value = view.values[field];
    input(field).readOnly = view.fromEnvironment.includes(field);
  }
  for (const radio of radios()) {
    radio.checked = radio.value === view.values.https;
    radio.disabled = view.fromEnvironment.includes('https');
  }
  syncFileFields();
}

form.addEventListener('change', syncFileFields);

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const save = document.querySelector<HTMLButtonElement>('#save')!;
  save.disabled = true;
  showErrors({});
  showStatus('Saving and restarting the server…');
  bridge
    .save(read())
    .then((reply) => {
      if (reply.ok) return showStatus(reply.message);
      showErrors(reply.errors ?? {});
      showStatus(reply.message ?? 'Please correct the marked fields.', true);
    })
    .catch((error: unknown) => showStatus(String(error), true))
    .finally(() => (save.disabled = false));
});

for (const button of Array.from(form.querySelectorAll<HTMLButtonElement>('button[data-browse]'))) {
  button.addEventListener('click', () => {
    const field = button.dataset.browse as Field;
    if (input(field).readOnly || input(field).disabled) return;
    void bridge.choosePath(button.dataset.kind === 'folder' ? 'folder' : 'file').then((chosen) => {
      if (chosen) input(field).value = chosen;
    });
  });
}

document.querySelector('#cancel')!.addEventListener('click', () => window.close());

load().catch((error: unknown) => showStatus(`Cannot read the settings: ${String(error)}`, true));
