import { allowed } from "../../../operations/authorization.ts";
import { type Html, html } from "../html.ts";
import { consolePaths } from "../paths.ts";
import type { SignedIn } from "../sessions.ts";

export interface PageFrame {
  /** The `<h1>` and the window title. */
  title: string;
  /** Who is signed in: the header then has the navigation, the search and sign-out. */
  signedIn?: SignedIn | undefined;
  /** The term in the search field (on the search results page). */
  searchTerm?: string | undefined;
  /** The page reloads itself this often (an event still pending); only with the script, and never while a form is being filled. */
  refreshSeconds?: number | undefined;
}

/**
 * Every console page: one stylesheet and one script from the console's own
 * route, no inline script or style (the CSP allows neither), landmarks
 * (banner, navigation, search, main) and one `<h1>`.
 */
export function page(frame: PageFrame, content: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Gateway console</title>
<link rel="stylesheet" href="${consolePaths.stylesheet}">
<script type="module" src="${consolePaths.script}"></script>
</head>
<body>
<header class="top">
<a class="brand" href="${consolePaths.home}">Gateway console</a>
${frame.signedIn === undefined ? "" : signedInHeader(frame.signedIn, frame.searchTerm ?? "")}
</header>
<main${frame.refreshSeconds === undefined ? "" : html` data-refresh-seconds="${frame.refreshSeconds}"`}>
<h1>${frame.title}</h1>
${content}
</main>
</body>
</html>
`;
}

function signedInHeader(signedIn: SignedIn, searchTerm: string): Html {
  const { name, role } = signedIn.principal;
  return html`<nav aria-label="Console">
<ul>
<li><a href="${consolePaths.home}">Events</a></li>
<li><a href="${consolePaths.deliveries}">Platform deliveries</a></li>
${mayReplay(signedIn) ? html`<li><a href="${consolePaths.bulkReplay}">Bulk replay</a></li>` : ""}
</ul>
</nav>
<form role="search" class="search" method="get" action="${consolePaths.search}">
<label for="search-term">Event ID, order number or correlation ID</label>
<input id="search-term" name="q" type="search" value="${searchTerm}" required maxlength="256">
<button type="submit">Search</button>
</form>
<p class="who">Signed in as <strong>${name}</strong> (${role})</p>
<form class="sign-out" method="post" action="${consolePaths.signOut}">
${csrfField(signedIn)}
<button type="submit">Sign out</button>
</form>`;
}

/** The synchronizer token every form of a signed-in page posts back. */
export function csrfField(signedIn: SignedIn): Html {
  return html`<input type="hidden" name="csrf" value="${signedIn.session.csrfToken}">`;
}

/** Whether the signed-in person may replay: the controls are not even shown to anyone else. */
export function mayReplay(signedIn: SignedIn): boolean {
  return allowed(signedIn.principal.role, "events.replay");
}
