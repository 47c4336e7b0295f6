import { Module } from '@nestjs/common';
import { DatabasesModule } from '../databases/databases.module';
import { ConnectorDirectory } from './connector-directory';
import { ConnectorStreams } from './connector-streams';
import { ListProvidersController } from './list-providers/list-providers.http.controller';
import { ListProvidersHandler } from './list-providers/list-providers.handler';
import { CreateConnectorController } from './create-connector/create-connector.http.controller';
import { CreateConnectorHandler } from './create-connector/create-connector.handler';
import { DiscoverResourcesController } from './discover-resources/discover-resources.http.controller';
import { DiscoverResourcesHandler } from './discover-resources/discover-resources.handler';
import { ConfigureConnectorController } from './configure-connector/configure-connector.http.controller';
import { ConfigureConnectorHandler } from './configure-connector/configure-connector.handler';
import { ConnectorStatusController } from './connector-status/connector-status.http.controller';
import { GetConnectorStatusHandler } from './connector-status/connector-status.handler';
import { ListConnectorsController } from './list-connectors/list-connectors.http.controller';
import { ListConnectorsHandler } from './list-connectors/list-connectors.handler';
import { GetConnectorController } from './get-connector/get-connector.http.controller';
import { GetConnectorHandler } from './get-connector/get-connector.handler';
import { ListResourcesController } from './list-resources/list-resources.http.controller';
import { ListResourcesHandler } from './list-resources/list-resources.handler';
import { SyncConnectorController } from './sync-connector/sync-connector.http.controller';
import { SyncConnectorHandler } from './sync-connector/sync-connector.handler';
import { PauseConnectorController } from './pause-connector/pause-connector.http.controller';
import { PauseConnectorHandler } from './pause-connector/pause-connector.handler';
import { ResumeConnectorController } from './resume-connector/resume-connector.http.controller';
import { ResumeConnectorHandler } from './resume-connector/resume-connector.handler';
import { UpdateConnectorController } from './update-connector/update-connector.http.controller';
import { UpdateConnectorHandler } from './update-connector/update-connector.handler';
import { UpdateResourceController } from './update-resource/update-resource.http.controller';
import { UpdateResourceHandler } from './update-resource/update-resource.handler';
import { AddResourceController } from './add-resource/add-resource.http.controller';
import { AddResourceHandler } from './add-resource/add-resource.handler';
import { RemoveResourceController } from './remove-resource/remove-resource.http.controller';
import { RemoveResourceHandler } from './remove-resource/remove-resource.handler';
import { DeleteConnectorController } from './delete-connector/delete-connector.http.controller';
import { DeleteConnectorHandler } from './delete-connector/delete-connector.handler';

/** Connectors (docs/connectors.md, "API"): providers, create, discover, configure, status, settings, resources, sync, pause, resume, delete. */
@Module({
  imports: [DatabasesModule],
  controllers: [
    ListProvidersController,
    CreateConnectorController,
    ListConnectorsController,
    GetConnectorController,
    DiscoverResourcesController,
    ConfigureConnectorController,
    ConnectorStatusController,
    ListResourcesController,
    SyncConnectorController,
    PauseConnectorController,
    ResumeConnectorController,
    UpdateConnectorController,
    UpdateResourceController,
    AddResourceController,
    RemoveResourceController,
    DeleteConnectorController,
  ],
  providers: [
    ConnectorDirectory,
    ConnectorStreams,
    ListProvidersHandler,
    CreateConnectorHandler,
    ListConnectorsHandler,
    GetConnectorHandler,
    DiscoverResourcesHandler,
    ConfigureConnectorHandler,
    GetConnectorStatusHandler,
    ListResourcesHandler,
    SyncConnectorHandler,
    PauseConnectorHandler,
    ResumeConnectorHandler,
    UpdateConnectorHandler,
    UpdateResourceHandler,
    AddResourceHandler,
    RemoveResourceHandler,
    DeleteConnectorHandler,
  ],
})
export class ConnectorsModule {}
