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

/** Marks where a placeholder rendered empty (a private-use character no template contains). */
const gap = '\uE000';

/**
 * Text (no `encode`: prose spoken or shown) has the blanks of empty placeholders tidied: "Hello
 * {{name}}, ..." with no name reads "Hello, ...", never "Hello , ...", and no double spaces are
 * left. Encoded output (URLs, JSON) is left exactly as substituted.
 */
export function render(
  template: string,
  scope: TemplateScope,
  onMissing: (name: string) => void = () => {},
  encode?: (value: string) => string,
): string {
  let empty = false;
  const out = template.replace(placeholder, (_match, name: string) => {
    const value = resolve(scope, name);
    if (value === undefined || value === null || value === '') {
      if (value !== '') onMissing(name);
      empty = true;
      return encode ? '' : gap;
    }
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    return encode ? encode(text) : text;
  });
  return empty && !encode ? tidyGaps(out) : out;
}

/** Removes empty placeholders with the blanks around them: none before punctuation or at a line's ends, one between words. */
function tidyGaps(text: string): string {
  return text
    .replace(/[ \t]*\uE000(?:[ \t]*\uE000)*[ \t]*/g, gap)
    .replace(/\uE000(?=[,.;:!?)\]]|$|\n)/gm, '')
    .replace(/(^|\n|[([])\uE000/g, '$1')
    .replace(/\uE000/g, ' ');
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
