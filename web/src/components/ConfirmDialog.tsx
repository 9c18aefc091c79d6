import type { ReactNode } from 'react';
import { ErrorState } from './states';

/** A modal asking to confirm a deletion; the caller's mutation runs on "Delete". */
export function ConfirmDialog({
  title,
  children,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  title: string;
  children: ReactNode;
  pending: boolean;
  error: unknown;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <div className="modal-backdrop">
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby="confirm-title">
        <h2 id="confirm-title">{title}</h2>
        {children}
        {error ? <ErrorState error={error} /> : null}
        <div className="modal-actions">
          <button className="button" onClick={onCancel} autoFocus>
            Cancel
          </button>
          <button className="button danger" onClick={onConfirm} disabled={pending}>
            {pending ? 'Deleting…' : 'Delete'}
          </button>
        </div>
      </div>
    </div>
  );
}
