import type { ComponentChildren } from 'preact';

/** Props of {@link Notice}. */
export interface NoticeProps {
  /** The news; when it is empty (`''`, `undefined`, `null`, `false`) nothing is rendered. */
  children?: ComponentChildren;
}

/**
 * What just happened or what to do next (saved, deleted, enter the code), read out politely
 * (`role="status"`); nothing when there is nothing to say.
 */
export function Notice({ children }: NoticeProps) {
  if (!children) return null;
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}
