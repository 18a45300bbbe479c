import type { Request } from "express";
import type { GroupRecord } from "../../src/directory/directory-types.js";
import type { Config } from "../../src/config/config-schema.js";
import { BadRequestError, NotFoundError } from "../../src/errors.js";
import { statesAttribute, toCanonicalGroup } from "../../src/scim/canonical-resource.js";
import { normalizePatchRequest } from "../../src/scim/dialects.js";
import { applyGroupPatch, groupPatchNeedsMembers } from "../../src/scim/patch.js";
import { projectResource } from "../../src/scim/projection.js";
import { SCHEMA_LIST, type JsonObject } from "../../src/scim/scim-types.js";
import {
  type ListParams,
  type Projection,
  listParam,
  membersExcluded,
  parseListParams,
  projectionOf,
} from "./list-params.js";
import { etagHeaders, ifMatchOf, resourceHeaders } from "./preconditions.js";
import { locationOf, renderGroup, scimBaseUrl } from "./scim-render.js";
import { type ResourceHandlers, type ScimRouterDeps, requireObjectBody, sendScim } from "./scim-http.js";

/** /Groups (RFC 7644 §3.3-§3.6). Membership changes go through the store as add/remove sets. */
/** The platform holds embed-tenant group names of at most this many characters (platform-api.yaml). */
export const EMBED_GROUP_NAME_MAX = 200;

/**
 * Refuses at intake a group name that the source's platform target cannot hold, so that the
 * identity admin sees the error instead of a dead letter later. Embed groups are named
 * groupPrefix + displayName.
 */
export function checkGroupName(config: Config, source: string, resource: { displayName?: unknown }): void {
  const target = config.sources[source];
  if (!target || target.target === "workspace") return;
  const name = `${target.groupPrefix}${String(resource.displayName ?? "")}`;
  if (name.length > EMBED_GROUP_NAME_MAX) {
    throw new BadRequestError(
      `displayName: an embed-tenant group name holds at most ${EMBED_GROUP_NAME_MAX} characters (prefix included); this one has ${name.length}`,
      "invalidValue",
    );
  }
}

export function createGroupHandlers({ directory, config }: ScimRouterDeps): ResourceHandlers {
  const source = (req: Request) => String(req.params.source);
  const id = (req: Request) => String(req.params.id);
  /** ETag and Location of an answer that carries the group `record`. */
  const headersOf = (req: Request, record: GroupRecord) =>
    resourceHeaders(
      record.meta.version,
      locationOf(scimBaseUrl(req, source(req)), "Groups", record.resource.id),
    );

  const listWith = async (req: Request, params: ListParams): Promise<JsonObject> => {
    const base = scimBaseUrl(req, source(req));
    const page = await directory.listGroups(source(req), {
      ...params,
      withMembers: !membersExcluded(params),
    });
    return {
      schemas: [SCHEMA_LIST],
      totalResults: page.totalResults,
      startIndex: params.startIndex,
      itemsPerPage: page.items.length,
      Resources: page.items.map((g) => projectResource(renderGroup(g, base), params)),
    };
  };

  const answer = async (req: Request, wanted: Projection, groupId: string) => {
    const record = await directory.getGroup(source(req), groupId, { withMembers: !membersExcluded(wanted) });
    if (!record) throw new NotFoundError(`Group ${groupId} not found`);
    return { body: projectResource(renderGroup(record, scimBaseUrl(req, source(req))), wanted), record };
  };

  /**
   * A create or replace answers from what the write returned (the group's members are exactly the
   * ones written), without reading the group back.
   */
  const rendered = (req: Request, wanted: Projection, record: GroupRecord): JsonObject => {
    const shown = membersExcluded(wanted) ? { ...record, members: undefined } : record;
    return projectResource(renderGroup(shown, scimBaseUrl(req, source(req))), wanted);
  };

  return {
    list: async (req, res) => {
      sendScim(res, 200, await listWith(req, parseListParams(req.query as Record<string, unknown>, "Group")));
    },
    search: async (req, res) => {
      sendScim(res, 200, await listWith(req, parseListParams(requireObjectBody(req), "Group")));
    },
    create: async (req, res) => {
      const { resource, members } = toCanonicalGroup(requireObjectBody(req));
      checkGroupName(config, source(req), resource);
      const wanted = projectionOf(req);
      const created = await directory.createGroup(source(req), resource, members);
      const body = rendered(req, wanted, created);
      sendScim(res, 201, body, headersOf(req, created));
    },
    get: async (req, res) => {
      const { body, record } = await answer(req, projectionOf(req), id(req));
      sendScim(res, 200, body, headersOf(req, record));
    },
    replace: async (req, res) => {
      const body = requireObjectBody(req);
      const { resource, members } = toCanonicalGroup(body);
      checkGroupName(config, source(req), resource);
      const wanted = projectionOf(req);
      if (statesAttribute(body, "members", "Group")) {
        const replaced = await directory.replaceGroup(source(req), id(req), resource, members, {
          ifMatch: ifMatchOf(req),
        });
        sendScim(res, 200, rendered(req, wanted, replaced), headersOf(req, replaced));
        return;
      }
      // No members in the body: the group is replaced, its members stay (statesAttribute).
      await directory.updateGroup(source(req), id(req), () => ({ resource }), { ifMatch: ifMatchOf(req) });
      const read = await directory.getGroup(source(req), id(req), { withMembers: true });
      if (!read) throw new NotFoundError(`Group ${id(req)} not found`);
      sendScim(res, 200, rendered(req, wanted, read), headersOf(req, read));
    },
    patch: async (req, res) => {
      const operations = normalizePatchRequest(requireObjectBody(req));
      const wanted = projectionOf(req);
      const updated = await directory.updateGroup(
        source(req),
        id(req),
        (current) => {
          const next = applyGroupPatch(current.resource, current.members, operations);
          checkGroupName(config, source(req), next.resource);
          return next;
        },
        // The member list is read only for a members filter that needs it (not `value eq`).
        { ifMatch: ifMatchOf(req), withMembers: groupPatchNeedsMembers(operations) },
      );
      // A group PATCH answers 204 (RFC 7644 §3.5.2) unless the caller asked for attributes back:
      // re-reading a 5,000-member group on every membership change costs more than it gives.
      const query = req.query as Record<string, unknown>;
      if (
        listParam(query, "attributes") === undefined &&
        listParam(query, "excludedAttributes") === undefined
      ) {
        sendScim(res, 204, undefined, etagHeaders(updated.meta.version));
        return;
      }
      const { body, record } = await answer(req, wanted, id(req));
      sendScim(res, 200, body, headersOf(req, record));
    },
    remove: async (req, res) => {
      await directory.deleteGroup(source(req), id(req), { ifMatch: ifMatchOf(req) });
      sendScim(res, 204, undefined);
    },
  };
}
