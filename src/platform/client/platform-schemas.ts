/**
 * Run-time schemas of the platform's answers, mirroring platform-api.yaml. Objects stay open
 * (`looseObject`): the platform may add fields; what the bridge relies on must be there.
 */
import { z } from "zod";

export const scimUserSchema = z.looseObject({
  schemas: z.array(z.string()),
  id: z.string().min(1),
  externalId: z.string().optional(),
  userName: z.string(),
  active: z.boolean().optional(),
});

export const scimGroupSchema = z.looseObject({
  schemas: z.array(z.string()),
  id: z.string().min(1),
  externalId: z.string().optional(),
  displayName: z.string(),
  members: z.array(z.looseObject({ value: z.string(), display: z.string().optional() })).optional(),
});

function scimList<T extends z.ZodType>(resource: T) {
  return z.looseObject({
    schemas: z.array(z.string()).optional(),
    totalResults: z.number().int().min(0).optional(),
    startIndex: z.number().int().optional(),
    itemsPerPage: z.number().int().optional(),
    Resources: z.array(resource).optional(),
  });
}

export const scimUserListSchema = scimList(scimUserSchema);
export const scimGroupListSchema = scimList(scimGroupSchema);

export const bulkUserResultSchema = z.looseObject({
  succeeded: z.array(z.string()),
  failed: z.array(z.looseObject({ userId: z.string(), code: z.string(), message: z.string() })),
});

export const userAttributeTypeSchema = z.enum([
  "string",
  "number",
  "boolean",
  "string_array",
  "number_array",
]);

export const userAttributeSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  displayName: z.string().optional(),
  type: userAttributeTypeSchema,
});

export const userAttributeListSchema = z.looseObject({ items: z.array(userAttributeSchema) });

export const userAttributeValueValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.string()),
  z.array(z.number()),
  z.null(),
]);

export const userAttributeValueSchema = z.looseObject({
  userId: z.string(),
  attributeId: z.number().int(),
  name: z.string(),
  type: userAttributeTypeSchema,
  value: userAttributeValueValueSchema,
});

export const userAttributeValueListSchema = z.looseObject({ items: z.array(userAttributeValueSchema) });

export const pageInfoSchema = z.looseObject({
  hasNextPage: z.boolean(),
  endCursor: z.string().nullable().optional(),
});

export function cursorPageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({ items: z.array(item), pageInfo: pageInfoSchema });
}

export const embedTenantSchema = z.looseObject({ name: z.string(), displayName: z.string().optional() });

export const embedGroupSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  memberCount: z.number().int().optional(),
});

export const embedUserSchema = z.looseObject({
  id: z.string(),
  externalId: z.string(),
  email: z.string().optional(),
  displayName: z.string().optional(),
});

export const memberCountSchema = z.looseObject({ memberCount: z.number().int() });

/**
 * Error bodies, read only to word a PlatformError: SCIM (RFC 7644 §3.12) or `{error: {code,
 * message}}`. Each field is read on its own, so that one of another type (a numeric `status`,
 * where the contract says a string) drops that field alone.
 */
export const errorBodySchema = z.looseObject({
  status: z.unknown().optional(),
  scimType: z.string().optional().catch(undefined),
  detail: z.string().optional().catch(undefined),
  error: z
    .looseObject({
      code: z.string().optional().catch(undefined),
      message: z.string().optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
});
