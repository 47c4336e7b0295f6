import { ContextItem } from '../item-view.response.dto';

/** PATCH /context/{id}/metadata: the item as it is after the edit. */
export class UpdateMetadataResponse extends ContextItem {}
