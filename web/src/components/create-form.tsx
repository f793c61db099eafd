import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { ErrorBox } from './error-box';
import { issueAt } from './field';
import { useAttempt } from './use-attempt';

type FormValues = Record<string, string | boolean>;

/**
 * A create form's state: the values, the API's refusal and its field issues, and binders that give
 * a field its value, change handler and the issue at its API path (the key unless named).
 */
export function useCreateForm<F extends FormValues>(initial: F) {
  const [form, setForm] = useState<F>(initial);
  const [error, attempt] = useAttempt();
  const issues = error instanceof ApiError ? (error.body.issues ?? []) : [];
  const text = (key: keyof F & string, path: string = key) => ({
    value: String(form[key]),
    onChange: (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value }),
    issue: issueAt(issues, path),
  });
  const check = (key: keyof F & string) => ({
    checked: form[key] === true,
    onChange: (e: { target: { checked: boolean } }) => setForm({ ...form, [key]: e.target.checked }),
  });
  return { form, setForm, error, attempt, issues, text, check };
}
export type CreateForm<F extends FormValues> = ReturnType<typeof useCreateForm<F>>;

/** The panel under a list that creates one more: fields in a wrapping row, the refusal, the button. */
export function CreatePanel<F extends FormValues>({ id, title, submit, refused, form, onCreate, children, after }: {
  id: string;
  title: string;
  submit: string;
  /** The title of the API's refusal ("The API refused the trunk"). */
  refused: string;
  form: CreateForm<F>;
  onCreate: () => Promise<void>;
  children: ReactNode;
  /** Anything below the row of fields (a fieldset of choices). */
  after?: ReactNode;
}) {
  const submitted = async (event: FormEvent) => {
    event.preventDefault();
    await form.attempt(onCreate);
  };
  return (
    <form className="panel" onSubmit={submitted} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <div className="row wrap">{children}</div>
      {after}
      <ErrorBox error={form.error} title={refused} />
      <button type="submit" className="primary">
        {submit}
      </button>
    </form>
  );
}
