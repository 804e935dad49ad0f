// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Plain .js is only this file and build output; the .mjs scripts are linted (and type-checked via checkJs).
  { ignores: ['dist/**', 'node_modules/**', 'renderer/dist/**', 'coverage/**', 'release/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Fastify plugins, hooks and route registrars are async by contract even when they await nothing;
      // the promise rules above catch the mistakes that matter.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Plain-JS scripts (they run before any build): tsc checks those that opt in with `// @ts-check`
    // and also knows their globals. Without type annotations the no-unsafe-* rules only report noise.
    files: ['**/*.mjs'],
    rules: {
      'no-undef': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Sandboxed Electron preloads must be CommonJS, where `import x = require()` is the typed import.
    files: ['electron/**/*.cts'],
    rules: { '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }] },
  },
);
