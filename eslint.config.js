// Lint rules for every workspace: typescript-eslint's recommended set on the TypeScript sources.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'server/src/db/migrations/**', 'dashboard/src/api/schema.d.ts', 'clients/node/src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['server/src/main.ts', 'server/src/cli/**', 'bench/**', 'dashboard/scripts/**', 'clients/node/scripts/**', 'sdk/scripts/**', '**/*.test.ts', 'server/test/**'],
    rules: { 'no-console': 'off' },
  },
  // Modules reach the delivery engine through its face only (server/src/delivery/delivery-face.ts).
  {
    files: ['server/src/modules/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '/delivery/(?!delivery-face\\.js$)', message: 'Import from delivery/delivery-face.js: it is the delivery module\'s face.' }] },
      ],
    },
  },
  // The example site: a Node script that serves it, and the page's plain script using the SDK's script build.
  { files: ['examples/**/*.mjs'], languageOptions: { globals: globals.node }, rules: { 'no-console': 'off' } },
  { files: ['examples/**/*.js'], languageOptions: { globals: { ...globals.browser, Herald: 'readonly' } } },
);
