import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';

interface FieldShell {
  readonly label: string;
  /** The API's message for this field, shown under it and announced with it. */
  readonly issue?: string | undefined;
  readonly hint?: ReactNode;
}

function Shell({ id, label, issue, hint, children }: FieldShell & { id: string; children: ReactNode }) {
  return (
    <div className={issue ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? <small id={`${id}-hint`}>{hint}</small> : null}
      <FieldIssue id={id} issue={issue} />
    </div>
  );
}

/** The API's message under a field, referenced by the field's aria-describedby (`<id>-issue`). */
export function FieldIssue({ id, issue }: { id: string; issue: string | undefined }) {
  return issue ? (
    <small className="issue" id={`${id}-issue`}>
      {issue}
    </small>
  ) : null;
}

const describedBy = (id: string, issue: string | undefined, hint: ReactNode): string | undefined =>
  [hint ? `${id}-hint` : '', issue ? `${id}-issue` : ''].filter(Boolean).join(' ') || undefined;

export function TextField({ label, issue, hint, ...input }: FieldShell & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <Shell id={id} label={label} issue={issue} hint={hint}>
      <input id={id} aria-invalid={issue ? true : undefined} aria-describedby={describedBy(id, issue, hint)} {...input} />
    </Shell>
  );
}

export function TextArea({ label, issue, hint, ...input }: FieldShell & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <Shell id={id} label={label} issue={issue} hint={hint}>
      <textarea id={id} aria-invalid={issue ? true : undefined} aria-describedby={describedBy(id, issue, hint)} {...input} />
    </Shell>
  );
}

export function SelectField({ label, issue, hint, options, ...input }: FieldShell & SelectHTMLAttributes<HTMLSelectElement> & { options: ReadonlyArray<readonly [string, string]> }) {
  const id = useId();
  return (
    <Shell id={id} label={label} issue={issue} hint={hint}>
      <select id={id} aria-invalid={issue ? true : undefined} aria-describedby={describedBy(id, issue, hint)} {...input}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </Shell>
  );
}

export function CheckField({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field check">
      <input id={id} type="checkbox" {...input} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** The message of the first issue at exactly `path` (paths as the API writes them: `a.b[0].c`). */
export const issueAt = (issues: ReadonlyArray<{ path: string; message: string }>, path: string): string | undefined =>
  issues.find((i) => i.path === path || i.path.startsWith(`${path}.`) || i.path.startsWith(`${path}[`))?.message;

/** A fieldset of checkboxes choosing a set (a token's scopes, a campaign's retry scenarios). */
export function CheckSet<V extends string>({ legend, options, chosen, onChange, issue }: {
  legend: string;
  options: ReadonlyArray<readonly [V, string]>;
  chosen: ReadonlySet<V>;
  onChange: (next: Set<V>) => void;
  issue?: string | undefined;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {options.map(([value, label]) => (
        <CheckField
          key={value}
          label={label}
          checked={chosen.has(value)}
          onChange={(e) => {
            const next = new Set(chosen);
            if (e.target.checked) next.add(value);
            else next.delete(value);
            onChange(next);
          }}
        />
      ))}
      {issue ? <small className="issue">{issue}</small> : null}
    </fieldset>
  );
}
