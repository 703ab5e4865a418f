import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import type { SignedIn } from "../sessions.ts";
import { page } from "./layout.ts";

export interface Message {
  title: string;
  detail: string;
  /** Where to go from here; the events list by default. */
  link?: { href: string; text: string };
}

/** A refusal or an error, said in one sentence, with a way back. */
export function messagePage(message: Message, signedIn: SignedIn | undefined): Html {
  const link =
    message.link ??
    (signedIn === undefined
      ? { href: consolePaths.signIn, text: "Sign in" }
      : { href: consolePaths.home, text: "Back to the events" });
  return page(
    { title: message.title, signedIn },
    html`<p class="problem" role="alert">${message.detail}</p>
<p><a href="${link.href}">${link.text}</a></p>`,
  );
}
