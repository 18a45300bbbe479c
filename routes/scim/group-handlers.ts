import type { Request, Response } from "express";
import type { GroupRecord } from "../../src/directory/directory-types.js";
import { checkIfMatch } from "../../src/directory/if-match.js";
import type { Config } from "../../src/config/config-schema.js";
import { BadRequestError, NotFoundError } from "../../src/errors.js";
import { EMBED_GROUP_NAME_MAX, characterCount } from "../../src/mapping/plan-embed-group.js";
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
  listQueryOf,
  parseListParams,
  projectionOf,
  searchRequest,
} from "./list-params.js";
import { etagHeaders, ifMatchOf, preconditionsOf, resourceHeaders } from "./preconditions.js";
import { renderGroup, scimBaseUrl } from "./scim-render.js";
import { type ResourceHandlers, type ScimRouterDeps, requireObjectBody, sendScim } from "./scim-http.js";

/** /Groups (RFC 7644 §3.3-§3.6). Membership changes go through the store as add/remove sets. */

/**
 * Refuses at intake a group name that the source's platform target cannot hold, so that the
 * identity admin sees the error instead of a dead letter later. Embed groups are named
 * groupPrefix + displayName. Characters are code points, as JSON Schema's maxLength counts them
 * and as the sync checks (sync-embed-group.ts): an emoji is one character, not two UTF-16 units.
 */
export function checkGroupName(config: Config, source: string, resource: { displayName?: unknown }): void {
  const target = config.sources[source];
  if (!target || target.target === "workspace") return;
  const length = characterCount(`${target.groupPrefix}${String(resource.displayName ?? "")}`);
  if (length > EMBED_GROUP_NAME_MAX) {
    throw new BadRequestError(
      `displayName: an embed-tenant group name holds at most ${EMBED_GROUP_NAME_MAX} characters (prefix included); this one has ${length}`,
      "invalidValue",
    );
  }
}

export function createGroupHandlers({ directory, config }: ScimRouterDeps): ResourceHandlers {
  const source = (req: Request) => String(req.params.source);
  const id = (req: Request) => String(req.params.id);
  /**
   * An answer that carries one group: its body (projected as asked; without members when they are
   * excluded or not asked for), ETag and Location.
   */
  const sendGroup = (
    req: Request,
    res: Response,
    status: number,
    record: GroupRecord,
    wanted: Projection,
  ) => {
    const base = scimBaseUrl(req, source(req));
    const shown = membersExcluded(wanted) ? { ...record, members: undefined } : record;
    sendScim(
      res,
      status,
      projectResource(renderGroup(shown, base), wanted),
      resourceHeaders(base, "Groups", record),
    );
  };

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

  /** The group as stored now, read with its members unless the answer leaves them out. */
  const read = async (req: Request, wanted: Projection, groupId: string): Promise<GroupRecord> => {
    const record = await directory.getGroup(source(req), groupId, { withMembers: !membersExcluded(wanted) });
    if (!record) throw new NotFoundError(`Group ${groupId} not found`);
    return record;
  };

  return {
    list: async (req, res) => {
      sendScim(res, 200, await listWith(req, parseListParams(listQueryOf(req), "Group")));
    },
    search: async (req, res) => {
      sendScim(
        res,
        200,
        await listWith(req, parseListParams(searchRequest(requireObjectBody(req)), "Group")),
      );
    },
    create: async (req, res) => {
      const { resource, members } = toCanonicalGroup(requireObjectBody(req));
      checkGroupName(config, source(req), resource);
      const wanted = projectionOf(req);
      // A create or replace answers from what the write returned (the group's members are exactly
      // the ones written), without reading the group back.
      sendGroup(req, res, 201, await directory.createGroup(source(req), resource, members), wanted);
    },
    get: async (req, res) => {
      const wanted = projectionOf(req);
      const record = await read(req, wanted, id(req));
      checkIfMatch(record.generation, ifMatchOf(req)); // RFC 7232 §3.1: a GET too
      sendGroup(req, res, 200, record, wanted);
    },
    replace: async (req, res) => {
      const body = requireObjectBody(req);
      const { resource, members } = toCanonicalGroup(body);
      checkGroupName(config, source(req), resource);
      const wanted = projectionOf(req);
      if (statesAttribute(body, "members", "Group")) {
        const replaced = await directory.replaceGroup(
          source(req),
          id(req),
          resource,
          members,
          preconditionsOf(req),
        );
        sendGroup(req, res, 200, replaced, wanted);
        return;
      }
      // No members in the body: the group is replaced, its members stay (statesAttribute).
      await directory.updateGroup(source(req), id(req), () => ({ resource }), preconditionsOf(req));
      sendGroup(req, res, 200, await read(req, wanted, id(req)), wanted);
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
        { ...preconditionsOf(req), withMembers: groupPatchNeedsMembers(operations) },
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
      sendGroup(req, res, 200, await read(req, wanted, id(req)), wanted);
    },
    remove: async (req, res) => {
      await directory.deleteGroup(source(req), id(req), preconditionsOf(req));
      sendScim(res, 204, undefined);
    },
  };
}
