/**
 * `{{variable_name}}` substitution (spec: Message text, SmartAI prompt, API headers/body, webhook
 * payload). A missing variable renders as empty and is reported through `onMissing`, never
 * thrown: a typo in a prompt must not drop a live call. Dotted names reach into object values
 * saved from API responses (`{{loan.amount}}`).
 */
export type TemplateValue = unknown;

export interface TemplateScope {
  lookup(name: string): TemplateValue;
}

const placeholder = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

export function render(
  template: string,
  scope: TemplateScope,
  onMissing: (name: string) => void = () => {},
  encode: (value: string) => string = (v) => v,
): string {
  return template.replace(placeholder, (_match, name: string) => {
    const value = resolve(scope, name);
    if (value === undefined || value === null) {
      onMissing(name);
      return '';
    }
    return encode(typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
}

/** Renders every string inside a JSON value (webhook payloads), keeping its structure. */
export function renderDeep(value: unknown, scope: TemplateScope, onMissing: (name: string) => void = () => {}): unknown {
  if (typeof value === 'string') return render(value, scope, onMissing);
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, scope, onMissing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, scope, onMissing)]));
  }
  return value;
}

/** Names a template refers to, for linting recipes. */
export function referencedNames(template: string): string[] {
  return [...template.matchAll(placeholder)].map((m) => m[1] ?? '');
}

export function resolve(scope: TemplateScope, name: string): unknown {
  const [head = '', ...rest] = name.split('.');
  let value: unknown = scope.lookup(head);
  if (value === undefined && rest.length > 0) {
    // A flat variable may legitimately contain dots when saved by path, e.g. `loan.amount`.
    return scope.lookup(name);
  }
  for (const key of rest) value = getPath(value, key);
  return value;
}

export function getPath(value: unknown, key: string): unknown {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value) && /^\d+$/.test(key)) return value[Number(key)];
  if (typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, key)) {
    return (value as Record<string, unknown>)[key];
  }
  return undefined;
}
