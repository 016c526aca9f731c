// Write actions: real buttons that show progress, ask first when the action cannot be undone,
// and report the outcome in the notice area in plain words.
import { h } from './dom.js';

/**
 * A button running `run()`, then `done(result)`; a failure is shown with the API error's sentence.
 * `confirmText`, when given, is asked first (a native, keyboard-friendly dialog). `focusKey` names
 * the button across reloads when its id changes with state (Pause becomes Resume).
 */
export function actionButton(ctx, { id, label, className, confirmText, focusKey, run, done }) {
  const button = h(
    'button',
    {
      type: 'button',
      id,
      class: className,
      'data-focus': focusKey,
      onclick: async () => {
        if (button.getAttribute('aria-disabled') === 'true') return;
        if (confirmText && !window.confirm(confirmText)) return;
        // aria-disabled, not disabled: a disabled button drops keyboard focus.
        button.setAttribute('aria-disabled', 'true');
        button.setAttribute('aria-busy', 'true');
        try {
          await done(await run());
        } catch (err) {
          ctx.notify(err.sentence ?? 'Something went wrong in the dashboard; reload the page and try again.', 'error');
          if (!err.sentence) console.error(err);
        } finally {
          button.removeAttribute('aria-disabled');
          button.removeAttribute('aria-busy');
        }
      },
    },
    label,
  );
  return button;
}
