/**
 * What a query of POST /api/sql may contain, decided on the engine's own parse of it
 * (`EXPLAIN AST`, one line per node, indented by depth), never on the query's text. Pure: no
 * I/O, so every rule is unit-tested (test/unit/sql-confine.test.ts). The design and its threat
 * model: docs/decisions/040-sql-endpoint.md.
 */

export interface AstNode {
  type: string;
  /** The rest of the line: a name (`Function sum`), a literal, an alias, a child count. */
  text: string;
  children: AstNode[];
}

/** A query the endpoint refuses: 403 when it reaches past its confinement, 400 when it is malformed. */
export class ConfinementError extends Error {
  constructor(
    message: string,
    readonly kind: 'forbidden' | 'invalid',
  ) {
    super(message);
    this.name = 'ConfinementError';
  }
}

/** Builds the tree from EXPLAIN AST's lines: a node's children are the lines below it, one space deeper. */
export function parseExplainAst(lines: string[]): AstNode {
  const root: AstNode = { type: '', text: '', children: [] };
  const stack: Array<{ depth: number; node: AstNode }> = [{ depth: -1, node: root }];
  for (const line of lines) {
    if (line.trim() === '') continue;
    const depth = line.length - line.trimStart().length;
    const body = line.trimStart();
    const space = body.indexOf(' ');
    const node: AstNode = { type: space < 0 ? body : body.slice(0, space), text: space < 0 ? '' : body.slice(space + 1), children: [] };
    while (stack.length > 1 && stack.at(-1)!.depth >= depth) stack.pop();
    stack.at(-1)!.node.children.push(node);
    stack.push({ depth, node });
  }
  if (root.children.length !== 1) throw new ConfinementError('Send exactly one SELECT statement', 'invalid');
  return root.children[0]!;
}

/**
 * Node types a read may contain. Anything else (SETTINGS as `Set`, EXPLAIN, INSERT, DDL, …)
 * is refused by name, so a construct this list has never seen cannot slip through.
 */
const allowedNodes = new Set([
  'SelectWithUnionQuery',
  'SelectIntersectExceptQuery',
  'SelectQuery',
  'ExpressionList',
  'WithElement',
  'Subquery',
  'TablesInSelectQuery',
  'TablesInSelectQueryElement',
  'TableExpression',
  'TableIdentifier',
  'TableJoin',
  'ArrayJoin',
  'Identifier',
  'Literal',
  'Function',
  'Asterisk',
  'QualifiedAsterisk',
  'OrderByElement',
  'WindowListElement',
  'WindowDefinition',
  'InterpolateElement',
  'SampleRatio',
  'ColumnsRegexpMatcher',
  'ColumnsListMatcher',
  'QualifiedColumnsRegexpMatcher',
  'QualifiedColumnsListMatcher',
  'ColumnsTransformerList',
  'ColumnsExceptTransformer',
  'ColumnsReplaceTransformer',
  'ColumnsApplyTransformer',
  'ColumnsReplaceTransformer::Replacement',
]);

/**
 * Scalar functions that reach past the query's own tables or reveal the server: data by name
 * (dictionaries, Join tables, files, another table's columns), settings, the host, users and
 * roles, and functions that write (a Keeper sequence). Compared in lower case; names with a
 * leading underscore are the engine's internals (only `_CAST`, which the parser itself writes
 * for typed literals, is allowed).
 */
const deniedFunctions = new Set([
  'joinget',
  'joingetornull',
  'hascolumnintable',
  'file',
  'getmacro',
  'getsetting',
  'getsettingordefault',
  'getserversetting',
  'getmergetreesetting',
  'currentuser',
  'user',
  'currentprofiles',
  'currentroles',
  'enabledroles',
  'defaultroles',
  'hostname',
  'fqdn',
  'getserverport',
  'tcpport',
  'serveruuid',
  'displayname',
  'buildid',
  'filesystemavailable',
  'filesystemcapacity',
  'filesystemunreserved',
  'getoskernelversion',
  'zookeepersessionuptime',
  'catboostevaluate',
  'evalmlmethod',
  'naivebayesclassifier',
  'getclienthttpheader',
  'showcertificate',
  'generateserialid',
  'getmaxtablenamelengthfordatabase',
  'addresstoline',
  'addresstolinewithinlines',
  'addresstosymbol',
  'demangle',
  'logtrace',
  'currentdatabase',
  'currentschemas',
]);

/** IN and its forms read a table when their right side is a bare name: `x IN other_table`. */
const inFunctions = /^(global)?(not)?(null)?in$/i;

/** The documented views, for messages: any bare table name is left to the engine (see checkTableName). */
export interface ConfinementRules {
  views: readonly string[];
}

function nameOf(node: AstNode): string {
  // `TableIdentifier spans (alias s)`, `Function sum (children 1)`: the name is the first word.
  const space = node.text.indexOf(' ');
  return space < 0 ? node.text : node.text.slice(0, space);
}

/**
 * A table named with a database (`system.tables`, `loupe.spans`, or a quoted name holding a
 * dot) is refused. A bare name is left to the engine: the query runs in an empty database, so
 * a bare name is one of the endpoint's views or one of the query's own WITH names, or else
 * unknown. system.one is the one-row table the parser itself adds to a SELECT without FROM.
 */
function checkTableName(name: string, rules: ConfinementRules) {
  if (name === 'system.one') return;
  if (name.includes('.')) {
    throw new ConfinementError(`Table ${name} is out of reach: name the views ${rules.views.join(', ')} without a database`, 'forbidden');
  }
}

function walk(node: AstNode, parent: AstNode | undefined, rules: ConfinementRules) {
  if (!allowedNodes.has(node.type)) {
    if (node.type === 'Set')
      throw new ConfinementError('SETTINGS are not allowed: the service sets the limits of every query', 'forbidden');
    throw new ConfinementError(`${node.type} is not allowed: send one read-only SELECT`, 'forbidden');
  }
  if (node.type === 'TableIdentifier') checkTableName(nameOf(node), rules);
  if (node.type === 'Function') {
    const name = nameOf(node);
    const lower = name.toLowerCase();
    if (parent?.type === 'TableExpression') {
      throw new ConfinementError(`Table function ${name} is not allowed: read the views ${rules.views.join(', ')}`, 'forbidden');
    }
    if (lower.startsWith('dict') || deniedFunctions.has(lower) || (lower.startsWith('_') && lower !== '_cast')) {
      throw new ConfinementError(`Function ${name} is not allowed in SQL queries`, 'forbidden');
    }
    if (inFunctions.test(name)) {
      const right = node.children[0]?.children[1];
      if (right?.type === 'Identifier') checkTableName(nameOf(right), rules);
    }
  }
  for (const child of node.children) walk(child, node, rules);
}

/** Throws a ConfinementError unless the tree is one SELECT that reads only the views. */
export function checkConfinement(root: AstNode, rules: ConfinementRules): void {
  if (root.type !== 'SelectWithUnionQuery') throw new ConfinementError('Only a SELECT (or WITH … SELECT) query is allowed', 'forbidden');
  walk(root, undefined, rules);
}
