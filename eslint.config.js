// Lint rules for every workspace: typescript-eslint's recommended set on the TypeScript sources.
import js from '@eslint/js';
import globals from 'globals';
import path from 'node:path';
import tseslint from 'typescript-eslint';

const SERVER_SRC = path.resolve(import.meta.dirname, 'server/src');

/** The module a file of server/src belongs to (`modules/<name>` or `delivery`), undefined for the other areas. */
function moduleOf(file) {
  const parts = path.relative(SERVER_SRC, file).split(path.sep);
  if (parts[0] === '..') return undefined;
  if (parts[0] === 'modules' && parts.length > 2) return `modules/${parts[1]}`;
  if (parts[0] === 'delivery' && parts.length > 1) return 'delivery';
  return undefined;
}

const facesRule = {
  meta: { type: 'problem', messages: { bypass: "Import {{module}}/index.js: it is the module's face ({{file}} is its inside)." } },
  create(context) {
    const importer = moduleOf(context.filename);
    const check = (source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.resolve(path.dirname(context.filename), source.value);
      const module = moduleOf(target);
      if (module === undefined || module === importer) return;
      const file = path.relative(path.join(SERVER_SRC, module), target).split(path.sep).join('/');
      if (file !== 'index.js') context.report({ node: source, messageId: 'bypass', data: { module, file } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.argument),
    };
  },
};

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
  // Outside a module (modules/<name>/ or delivery/), only its face may be imported: modules/<name>/index.js, delivery/index.js.
  {
    files: ['server/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    plugins: { herald: { rules: { faces: facesRule } } },
    rules: { 'herald/faces': 'error' },
  },
  // The example site: a Node script that serves it, and the page's plain script using the SDK's script build.
  { files: ['examples/**/*.mjs'], languageOptions: { globals: globals.node }, rules: { 'no-console': 'off' } },
  { files: ['examples/**/*.js'], languageOptions: { globals: { ...globals.browser, Herald: 'readonly' } } },
);
