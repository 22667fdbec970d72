import { Module } from '@nestjs/common';
import { TenancyModule } from '../tenancy/tenancy.module.js';

@Module({ imports: [TenancyModule] })
export class DocumentsModule {}
