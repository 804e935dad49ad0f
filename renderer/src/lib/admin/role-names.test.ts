import { describe, expect, it } from 'vitest';
import { BUILT_IN_ROLES } from '../../../../server/src/roles/permissions';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';

const messages = { en, de };

describe('built-in role names', () => {
  it('names and describes every built-in role of the server in both languages', () => {
    for (const language of ['en', 'de'] as const) {
      const names = messages[language].admin.roles.builtInNames;
      expect(Object.keys(names).sort(), language).toEqual(BUILT_IN_ROLES.map((r) => r.name).sort());
      for (const { name, description } of Object.values(names)) {
        expect(name.length, language).toBeGreaterThan(0);
        expect(description.length, language).toBeGreaterThan(0);
      }
    }
  });

  it('keeps the English texts of the server for English', () => {
    const names = messages.en.admin.roles.builtInNames;
    for (const role of BUILT_IN_ROLES) expect(names[role.name]?.description).toBe(role.description);
  });
});
