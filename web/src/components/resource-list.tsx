import { Fragment, useState, type ReactNode } from 'react';
import { ErrorBox } from './error-box';
import { PageFooter, type Paged } from './paged';
import { SpecEditor, type EditedSpec } from './spec-editor';
import { useAttempt } from './use-attempt';

/** Runs a row's action (a toggle, a star, a delete); what it throws shows above the table. */
export type RowAction = (action: () => Promise<void>) => Promise<void>;

export interface Column<T> {
  readonly header: string;
  readonly cell: (item: T, act: RowAction) => ReactNode;
}

/** A row's stored spec edited in place by the generic SpecEditor and saved with PUT. */
export interface RowEdit<T> {
  /** The editor's title, also the Edit button's accessible name ("Edit trunk carrier"). */
  readonly title: (item: T) => string;
  readonly spec: (item: T) => object;
  /** Top-level fields shown but not editable here. */
  readonly readOnly?: readonly string[];
  readonly save: (item: T, spec: EditedSpec) => Promise<T>;
}

/** A row's Delete button: the request, then the list read again. */
export interface RowRemove<T> {
  /** The button's accessible name ("Delete word hello"). */
  readonly label: (item: T) => string;
  readonly run: (item: T) => Promise<void>;
  /** Rows that cannot be deleted (built-in profiles) get no button. */
  readonly when?: (item: T) => boolean;
}

/**
 * One resource list of the dashboard: the table of columns (each cell labelled for the narrow
 * layout), an actions column, the in-place editor under a row, paging, and the errors of the
 * row actions. Every list page is this plus its own create form and extras.
 */
export function ResourceList<T extends { readonly id: string }>({ caption, noun, list, columns, actions, edit, remove, actionError = 'Not done' }: {
  caption: string;
  /** Plural, for the footer's "3 numbers shown". */
  noun: string;
  list: Paged<T>;
  columns: ReadonlyArray<Column<T>>;
  actions?: (item: T, act: RowAction) => ReactNode;
  edit?: RowEdit<T>;
  remove?: RowRemove<T>;
  /** The title of a failed row action's error. */
  actionError?: string;
}) {
  const [rowError, act] = useAttempt();
  const [editing, setEditing] = useState<string>();
  const hasActions = actions !== undefined || edit !== undefined || remove !== undefined;
  const width = columns.length + (hasActions ? 1 : 0);

  const actionCell = (item: T) => {
    const editButton = edit ? (
      <button type="button" onClick={() => setEditing(editing === item.id ? undefined : item.id)} aria-expanded={editing === item.id} aria-label={edit.title(item)}>
        Edit
      </button>
    ) : null;
    const deleteButton =
      remove && (remove.when?.(item) ?? true) ? (
        <button
          type="button"
          className="danger"
          onClick={() =>
            act(async () => {
              await remove.run(item);
              list.reload();
            })
          }
          aria-label={remove.label(item)}
        >
          Delete
        </button>
      ) : null;
    const own = actions?.(item, act) ?? null;
    const count = [editButton, own, deleteButton].filter((b) => b !== null).length;
    return (
      <td>
        {count > 1 ? (
          <div className="row">
            {editButton}
            {own}
            {deleteButton}
          </div>
        ) : (
          (editButton ?? own ?? deleteButton)
        )}
      </td>
    );
  };

  return (
    <>
      <ErrorBox error={rowError} title={actionError} />
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.header}>
                {c.header}
              </th>
            ))}
            {hasActions ? (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {list.items.map((item) => (
            <Fragment key={item.id}>
              <tr>
                {columns.map((c) => (
                  <td data-label={c.header} key={c.header}>
                    {c.cell(item, act)}
                  </td>
                ))}
                {hasActions ? actionCell(item) : null}
              </tr>
              {edit && editing === item.id ? (
                <tr>
                  <td colSpan={width}>
                    <SpecEditor
                      title={edit.title(item)}
                      spec={edit.spec(item)}
                      readOnly={edit.readOnly ?? []}
                      onCancel={() => setEditing(undefined)}
                      onSave={async (spec) => {
                        const updated = await edit.save(item, spec);
                        list.replace((x) => x.id === item.id, updated);
                        setEditing(undefined);
                      }}
                    />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun={noun} />
    </>
  );
}
