// Angular Material 22.2.6 (npm @angular/material, with @angular/core 22.2.6): a mat-select in a
// mat-form-field with its mat-label; Save shows the value the select's own selectionChange
// reported. Written as plain JS: the decorators are called as functions and Angular's JIT
// compiler (imported first) compiles the template and links Material's partial declarations
// in the page, so no Angular build step is needed.
import '@angular/compiler';
import { Component, provideZonelessChangeDetection, signal } from '@angular/core';
import { bootstrapApplication } from '@angular/platform-browser';
import { MatFormFieldModule } from '@angular/material/form-field';
import { MatSelectModule } from '@angular/material/select';
import { MatButtonModule } from '@angular/material/button';
// Its prebuilt theme: the package exports the file only under the "style" condition, which
// esbuild does not apply by default, so it is named by its place in node_modules.
import '../../../node_modules/@angular/material/prebuilt-themes/azure-blue.css';

class Page {
  sizes = [
    { value: 'xs', label: 'Extra small' },
    { value: 's', label: 'Small' },
    { value: 'm', label: 'Medium' },
    { value: 'l', label: 'Large' },
    { value: 'xl', label: 'Extra large' },
  ];

  size = signal('');

  saved = signal('Nothing saved');

  save() {
    this.saved.set(`Saved: size=${this.size() || '-'}`);
  }
}

Component({
  selector: 'app-page',
  imports: [MatFormFieldModule, MatSelectModule, MatButtonModule],
  template: `
    <mat-form-field appearance="outline" style="width: 280px">
      <mat-label>Shirt size</mat-label>
      <mat-select (selectionChange)="size.set($event.value)">
        @for (s of sizes; track s.value) {
          <mat-option [value]="s.value">{{ s.label }}</mat-option>
        }
      </mat-select>
    </mat-form-field>
    <div><button mat-flat-button type="button" (click)="save()">Save</button></div>
    <p id="saved">{{ saved() }}</p>
  `,
})(Page);

bootstrapApplication(Page, { providers: [provideZonelessChangeDetection()] });
