/**
 * What a worker's code reads of its environment, found in its sources: every file its entry reaches through
 * relative imports (type-only imports left out: they are gone from the bundle), each `env.NAME` in them,
 * and the names the entry module exports (the classes other workers may bind to).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from '../lib/home';

export interface SourceFacts {
  /** Files reached from the entry (absolute). */
  files: string[];
  /** Each upper-case name read as `env.NAME` (also `env?.NAME`, `env['NAME']`), with the first file that reads it. */
  envReads: Map<string, string>;
  /** Names the entry module exports (`export { X } from`, `export class X`). */
  exports: Set<string>;
  /** Whether the entry's default export has a `scheduled` handler (it then needs a cron trigger). */
  scheduled: boolean;
}

const EXTENSIONS = ['', '.ts', '.tsx', '.mts', '.js', '.mjs', '/index.ts', '/index.tsx', '/index.js'];
const CODE = /\.(m?[jt]sx?)$/;
const UPPER_NAME = /^[A-Z][A-Z0-9_]+$/;

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const extension of EXTENSIONS) {
    const candidate = base + extension;
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  // `./x.js` written for a TypeScript file `./x.ts`.
  const typescript = base.replace(/\.(m?)js$/, '.$1ts');
  return typescript !== base && existsSync(typescript) ? typescript : undefined;
}

/** `env`, `c.env`, `this.env`: the worker's environment, whatever holds it. */
function isEnv(node: ts.Expression): boolean {
  return (ts.isIdentifier(node) && node.text === 'env') || (ts.isPropertyAccessExpression(node) && node.name.text === 'env');
}

const scanned = new Map<string, SourceFacts>();

/** scanSources, once per entry in a process (a deploy reads each worker's code for the check and for its secrets). */
export function scanSourcesOnce(entry: string): SourceFacts {
  let facts = scanned.get(entry);
  if (!facts) scanned.set(entry, (facts = scanSources(entry)));
  return facts;
}

export function scanSources(entry: string): SourceFacts {
  const seen = new Set<string>();
  const envReads = new Map<string, string>();
  const exports = new Set<string>();
  let scheduled = false;
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!CODE.test(file)) continue;
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const follow = (specifier: ts.Expression | undefined) => {
      if (!specifier || !ts.isStringLiteral(specifier)) return;
      const target = resolveImport(file, specifier.text);
      if (target && !target.includes('/node_modules/')) queue.push(target);
    };
    const read = (name: string) => {
      if (UPPER_NAME.test(name) && !envReads.has(name)) envReads.set(name, relative(PROJECT_ROOT, file));
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node)) {
        if (!node.importClause?.isTypeOnly) follow(node.moduleSpecifier);
        return;
      }
      if (ts.isExportDeclaration(node)) {
        if (!node.isTypeOnly) follow(node.moduleSpecifier);
        if (file === entry && !node.isTypeOnly && node.exportClause && ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements) if (!element.isTypeOnly) exports.add(element.name.text);
        }
        return;
      }
      if (file === entry && ts.isClassDeclaration(node) && node.name && node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) exports.add(node.name.text);
      let exported = ts.isExportAssignment(node) ? node.expression : undefined;
      while (exported && (ts.isSatisfiesExpression(exported) || ts.isAsExpression(exported) || ts.isParenthesizedExpression(exported))) exported = exported.expression;
      if (file === entry && exported && ts.isObjectLiteralExpression(exported)) {
        scheduled = exported.properties.some((property) => property.name !== undefined && ts.isIdentifier(property.name) && property.name.text === 'scheduled');
      }
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) follow(node.arguments[0]);
      if (ts.isPropertyAccessExpression(node) && isEnv(node.expression)) read(node.name.text);
      if (ts.isElementAccessExpression(node) && isEnv(node.expression) && ts.isStringLiteral(node.argumentExpression)) read(node.argumentExpression.text);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { files: [...seen], envReads, exports, scheduled };
}
