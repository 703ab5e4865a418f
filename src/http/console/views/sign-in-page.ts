import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import { page } from "./layout.ts";

export interface SignInForm {
  /** The double-submit token: the same value is in the sign-in cookie. */
  csrfToken: string;
  /** Where to go once signed in (a console path). */
  next: string;
  /** Why the last try failed, if it did. */
  error?: string | undefined;
}

/** The token goes in a password field: not shown on screen, not kept in the URL, never in localStorage. */
export function signInPage(form: SignInForm): Html {
  const content = html`<p>Sign in with your own token (the one whose digest is in OPERATORS_FILE, or ADMIN_TOKEN). The console keeps a session cookie for 8 hours; the token itself is not stored.</p>
${form.error === undefined ? "" : html`<p class="problem" role="alert">${form.error}</p>`}
<form class="sign-in" method="post" action="${consolePaths.signIn}">
<input type="hidden" name="csrf" value="${form.csrfToken}">
<input type="hidden" name="next" value="${form.next}">
<div><label for="sign-in-token">Token</label>
<input id="sign-in-token" name="token" type="password" autocomplete="current-password" required></div>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`;
  return page({ title: "Sign in" }, content);
}
