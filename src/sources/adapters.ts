import type { Platform, SourceAdapter } from "./port.ts";
import { shopifyAdapter } from "./shopify.ts";
import { tildaAdapter } from "./tilda.ts";
import { woocommerceAdapter } from "./woocommerce.ts";

/** Every platform's adapter, by the name its URL and SOURCES_FILE use. */
export const ADAPTERS: Readonly<Record<Platform, SourceAdapter>> = {
  shopify: shopifyAdapter,
  woocommerce: woocommerceAdapter,
  tilda: tildaAdapter,
};
