/**
 * Messages in a view: an error (with the field or line it names), or an empty state.
 * Runs on: renderer.
 */
import type { ReactNode } from 'react';

export function ErrorNotice({ error, title }: { error: Error | null; title?: string }) {
  if (!error) return null;
  return (
    <div className="notice notice-error" role="alert">
      {title ? <strong>{title}: </strong> : null}
      {error.message}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}
