// Write actions: real buttons that show progress, ask first when the action cannot be undone,
// and report the outcome in the notice area in plain words.
import { h } from './dom.js';

/**
 * A button running `run()`, then `done(result)`; a failure is shown with the API error's sentence.
 * `confirmText`, when given, is asked first (a native, keyboard-friendly dialog).
 */
export function actionButton(ctx, { id, label, className, confirmText, run, done }) {
  const button = h(
    'button',
    {
      type: 'button',
      id,
      class: className,
      onclick: async () => {
        if (confirmText && !window.confirm(confirmText)) return;
        button.disabled = true;
        button.setAttribute('aria-busy', 'true');
        try {
          await done(await run());
        } catch (err) {
          ctx.notify(err.sentence ?? 'Something went wrong in the dashboard; reload the page and try again.', 'error');
          if (!err.sentence) console.error(err);
          button.disabled = false;
          button.removeAttribute('aria-busy');
        }
      },
    },
    label,
  );
  return button;
}
