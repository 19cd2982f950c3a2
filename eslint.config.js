// Lint rules for every workspace: typescript-eslint's recommended set on the TypeScript sources.
import js from '@eslint/js';
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
    files: ['server/src/main.ts', 'server/src/cli/**', 'bench/**', 'dashboard/scripts/**', 'clients/node/scripts/**', '**/*.test.ts', 'server/test/**'],
    rules: { 'no-console': 'off' },
  },
);
