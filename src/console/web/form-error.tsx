import type { ComponentChildren } from 'preact';

/** Props of {@link FormError}. */
export interface FormErrorProps {
  /** The message; when it is empty (`''`, `undefined`, `null`, `false`) nothing is rendered. */
  children?: ComponentChildren;
}

/**
 * The message of a form, panel or page that failed, announced at once (`role="alert"`); nothing
 * when there is no message, so callers pass their error state as it is.
 */
export function FormError({ children }: FormErrorProps) {
  if (!children) return null;
  return (
    <p class="form-error" role="alert">
      {children}
    </p>
  );
}
