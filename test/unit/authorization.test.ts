import { describe, expect, it } from "vitest";
import { ROLES, type Role } from "../../src/config/operators.ts";
import { ACTIONS, type Action, allowed, refusal, rolesAllowed } from "../../src/operations/authorization.ts";

/**
 * The issue's roles, written down apart from the policy table:
 * viewer reads every sender's events (bodies with e-mail and phone masked),
 * operator is viewer plus replay and bulk replay, admin is everything.
 */
const ISSUE: Readonly<Record<Role, Readonly<Record<Action, boolean>>>> = {
  viewer: { "events.read": true, "personal-data.read": false, "events.replay": false, "events.replay-bulk": false },
  operator: { "events.read": true, "personal-data.read": true, "events.replay": true, "events.replay-bulk": true },
  admin: { "events.read": true, "personal-data.read": true, "events.replay": true, "events.replay-bulk": true },
};

const actions = Object.keys(ACTIONS) as Action[];

describe("allowed(role, action)", () => {
  it.each(ROLES.flatMap((role) => actions.map((action) => [role, action] as const)))(
    "%s may %s as the issue says",
    (role, action) => {
      expect(allowed(role, action)).toBe(ISSUE[role][action]);
    },
  );

  it("covers every action the issue names, and no other", () => {
    expect([...actions].sort()).toEqual(Object.keys(ISSUE.admin).sort());
  });

  it("lets each role do whatever the role below it may", () => {
    for (const action of actions) {
      if (allowed("viewer", action)) expect(allowed("operator", action), action).toBe(true);
      if (allowed("operator", action)) expect(allowed("admin", action), action).toBe(true);
    }
  });

  it("grants nothing to a role it does not know (a stale session, a hand-edited store)", () => {
    for (const action of actions) expect(allowed("root" as Role, action)).toBe(false);
  });
});

describe("rolesAllowed and refusal", () => {
  it("lists the roles that may act, least first", () => {
    expect(rolesAllowed("events.read")).toEqual(["viewer", "operator", "admin"]);
    expect(rolesAllowed("events.replay")).toEqual(["operator", "admin"]);
    expect(rolesAllowed("events.replay-bulk")).toEqual(["operator", "admin"]);
  });

  it("says who was refused, in which role, and which roles would do", () => {
    const line = refusal({ name: "vera", role: "viewer" }, "events.replay");
    expect(line).toMatch(/^vera is a viewer\b/);
    expect(line).toMatch(/operator or admin$/);
  });
});
