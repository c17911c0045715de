// eslint 9 flat config: typescript-eslint's recommended rules (without type information, so it
// runs in seconds) over src/, test/, bench/ and tools/. `npm run lint` runs it with
// --max-warnings unlimited: errors fail, warnings are rules the code base does not meet yet
// (each says why it is a warning below).
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/', 'node_modules/', 'native/build/', 'coverage/', 'oclif.manifest.json']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {globals: {...globals.node}},
    rules: {
      // `_`-prefixed names are deliberately unused (interface parameters, destructuring holes).
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none'}],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
)
