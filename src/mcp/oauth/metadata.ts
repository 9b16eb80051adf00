import { type McpResource, resourceUrl } from '../../services/oauth/resources';
import { SCOPES } from '../../services/oauth/settings';

/** RFC 8414 authorization server metadata: what an MCP client reads after following a 401. */
export function authorizationServerMetadata(issuer: string, docsUrl: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    scopes_supported: [...SCOPES],
    service_documentation: docsUrl,
  };
}

/** RFC 9728 protected-resource metadata of one resource, naming itself and this authorization server. */
export function protectedResourceMetadata(issuer: string, resource: McpResource, docsUrl: string) {
  const name = resource.kind === 'all' ? 'Sluice MCP' : resource.kind === 'facet' ? `Sluice MCP (${resource.facet} tools)` : 'Sluice MCP (a custom server)';
  return {
    resource: resourceUrl(issuer, resource),
    authorization_servers: [issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: docsUrl,
  };
}
