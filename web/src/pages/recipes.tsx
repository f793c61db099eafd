import { useState, type FormEvent } from 'react';
import { unwrap } from '../api/client';
import { ErrorBox } from '../components/error-box';
import { useAttempt } from '../components/use-attempt';
import { TextField } from '../components/field';
import { PageFooter, usePaged } from '../components/paged';
import { starterRecipe } from '../recipe/model';
import { Link, navigate } from '../router';
import { useSession } from '../session';

/** The tenant's recipes, paged, and a form that starts a new one in the builder. */
export function RecipesPage({ clientId }: { clientId: string }) {
  const { api } = useSession();
  const base = `/t/${encodeURIComponent(clientId)}/recipes`;
  const list = usePaged(
    async (cursor) => unwrap(await api.GET('/v1/tenants/{clientId}/recipes', { params: { path: { clientId }, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    clientId,
  );
  const [name, setName] = useState('');
  const [error, attempt] = useAttempt();
  const create = async (event: FormEvent) => {
    event.preventDefault();
    await attempt(async () => {
      const created = unwrap(await api.POST('/v1/tenants/{clientId}/recipes', { params: { path: { clientId } }, body: starterRecipe(name.trim()) }));
      navigate(`${base}/${created.id}`);
    });
  };
  return (
    <>
      <h1>Recipes</h1>
      <form className="row wrap" onSubmit={create} aria-label="New recipe">
        <TextField label="New recipe name" value={name} onChange={(e) => setName(e.target.value)} required />
        <button type="submit" className="primary">
          Create and open
        </button>
      </form>
      <ErrorBox error={error} title="Could not create the recipe" />
      <table>
        <caption className="sr-only">Recipes</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Blocks</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {list.items.map((r) => (
            <tr key={r.id}>
              <td>
                <Link href={`${base}/${r.id}`}>{r.spec.name}</Link>
              </td>
              <td>{r.spec.description}</td>
              <td>{r.spec.blocks.length}</td>
              <td>{new Date(r.updatedAt).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <PageFooter list={list} noun="recipes" />
    </>
  );
}
