import { useState, type ReactNode } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { Clipped } from './Clipped';
import { ConfirmDialog } from './ConfirmDialog';

/**
 * The frame of one item's page (an evaluator, a monitor): breadcrumb back to its list, its name
 * and badge, a summary, Edit (the form `edit` draws, closed by its `close`) and Delete (confirmed,
 * then back to the list), and the page's own content.
 */
export function ItemDetail({
  list,
  name,
  badge,
  summary,
  actions,
  edit,
  remove,
  deleteTitle,
  deleteText,
  children,
}: {
  /** The list page: its title, path and the query key its data is cached under. */
  list: { title: string; path: string; queryKey: string };
  name: string;
  badge: ReactNode;
  summary: ReactNode;
  actions?: ReactNode;
  edit: (close: () => void) => ReactNode;
  remove: () => Promise<unknown>;
  deleteTitle: string;
  deleteText: ReactNode;
  children: ReactNode;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const deletion = useMutation({
    mutationFn: remove,
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [list.queryKey] });
      await navigate(list.path);
    },
  });
  return (
    <div className="page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to={list.path}>{list.title}</Link> / <Clipped text={name} />
      </nav>
      <header className="page-head">
        <div>
          <h1 className="title-with-icon">
            <Clipped text={name} /> {badge}
          </h1>
          {summary}
        </div>
        <div className="button-row">
          {actions}
          <button className="button small" onClick={() => setEditing((v) => !v)} aria-expanded={editing}>
            {editing ? 'Close' : 'Edit'}
          </button>
          <button className="button small" onClick={() => setConfirming(true)}>
            Delete
          </button>
        </div>
      </header>
      {editing &&
        edit(() => {
          setEditing(false);
          void queryClient.invalidateQueries({ queryKey: [list.queryKey] });
        })}
      {children}
      {confirming && (
        <ConfirmDialog
          title={deleteTitle}
          pending={deletion.isPending}
          error={deletion.error}
          onCancel={() => setConfirming(false)}
          onConfirm={() => deletion.mutate()}
        >
          <p>{deleteText}</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
