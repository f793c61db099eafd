import { useId } from 'react';
import { FieldIssue } from '../components/field';

/** What to do with a stored secret on save: keep it, replace it with a typed value, or clear it. */
export type SecretEdit = { readonly action: 'keep' } | { readonly action: 'replace'; readonly value: string } | { readonly action: 'clear' };

/** The API's masked read-back of a set secret (docs/api.md): the value itself never comes back. */
export const masked = '********';

/** The merge-patch value for a secret edit: absent (keep), the new value, or null (clear). */
export function secretPatch(edit: SecretEdit): { value?: string | null } {
  if (edit.action === 'replace') return { value: edit.value };
  if (edit.action === 'clear') return { value: null };
  return {};
}

/**
 * A write-only secret: says whether one is set (never what it is), takes a replacement, and can
 * clear it. The API's issue for the field shows under it like any other field's.
 */
export function SecretField({ label, isSet, edit, onEdit, issue, clearable = true }: {
  label: string;
  isSet: boolean;
  edit: SecretEdit;
  onEdit: (edit: SecretEdit) => void;
  issue?: string | undefined;
  /** False where the API requires the secret while its group exists (remove the group instead). */
  clearable?: boolean;
}) {
  const id = useId();
  const state = edit.action === 'clear' ? 'will be cleared on save' : edit.action === 'replace' ? 'will be replaced on save' : isSet ? 'set' : 'not set';
  return (
    <div className={issue ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="password"
        autoComplete="new-password"
        placeholder={isSet ? 'set: type to replace' : 'not set'}
        value={edit.action === 'replace' ? edit.value : ''}
        onChange={(e) => onEdit(e.target.value === '' ? { action: 'keep' } : { action: 'replace', value: e.target.value })}
        aria-invalid={issue ? true : undefined}
        aria-describedby={`${id}-state${issue ? ` ${id}-issue` : ''}`}
      />
      <small id={`${id}-state`} data-testid="secret-state">
        {label}: <strong>{state}</strong>
        {isSet && clearable && edit.action !== 'clear' ? (
          <>
            {' '}
            <button type="button" className="link" onClick={() => onEdit({ action: 'clear' })}>
              Clear {label.toLowerCase()}
            </button>
          </>
        ) : null}
        {edit.action !== 'keep' ? (
          <>
            {' '}
            <button type="button" className="link" onClick={() => onEdit({ action: 'keep' })}>
              Undo
            </button>
          </>
        ) : null}
      </small>
      <FieldIssue id={id} issue={issue} />
    </div>
  );
}
