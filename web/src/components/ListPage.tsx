import { useState, type ReactNode } from 'react';

/**
 * A page of one kind of record: its title and what the records are, a button that opens and
 * closes the form of a new one, then the list (`children`). `form` draws the form, given a way
 * to close it (once the record is made, when the page stays).
 */
export function ListPage({
  title,
  intro,
  newLabel,
  form,
  children,
}: {
  title: string;
  intro: ReactNode;
  newLabel: string;
  form: (close: () => void) => ReactNode;
  children: ReactNode;
}) {
  const [formOpen, setFormOpen] = useState(false);
  return (
    <div className="page">
      <header className="page-head">
        <div>
          <h1>{title}</h1>
          <p className="muted">{intro}</p>
        </div>
        <button className="button primary" onClick={() => setFormOpen((o) => !o)} aria-expanded={formOpen}>
          {formOpen ? 'Close' : newLabel}
        </button>
      </header>
      {formOpen && form(() => setFormOpen(false))}
      {children}
    </div>
  );
}
