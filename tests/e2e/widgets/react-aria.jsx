// React Aria Components 1.22.1 (npm react-aria-components, with react 18.3.1): Adobe's headless
// Select with its Label, a Button showing the SelectValue and a ListBox in a Popover; Save shows
// the key its onSelectionChange gave.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Button, Label, ListBox, ListBoxItem, Popover, Select, SelectValue } from 'react-aria-components';

const cities = [
  { id: 'lisbon', name: 'Lisbon' },
  { id: 'oslo', name: 'Oslo' },
  { id: 'rome', name: 'Rome' },
  { id: 'tokyo', name: 'Tokyo' },
  { id: 'vienna', name: 'Vienna' },
];

function Trip() {
  const [city, setCity] = useState(null);
  const [saved, setSaved] = useState('Nothing saved');
  return (
    <div style={{ width: 280 }}>
      <Select selectedKey={city} onSelectionChange={setCity} placeholder="Choose a city">
        <Label style={{ display: 'block', marginTop: 12 }}>Home city</Label>
        <Button style={{ display: 'flex', width: '100%', justifyContent: 'space-between', padding: 6 }}>
          <SelectValue />
          <span aria-hidden="true">▾</span>
        </Button>
        <Popover style={{ background: 'white', border: '1px solid #999', width: 260 }}>
          <ListBox items={cities} style={{ padding: 4, outline: 'none' }}>
            {(c) => <ListBoxItem id={c.id} style={{ padding: 6, cursor: 'default', outline: 'none' }}>{c.name}</ListBoxItem>}
          </ListBox>
        </Popover>
      </Select>
      <button type="button" style={{ display: 'block', marginTop: 16 }} onClick={() => setSaved(`Saved: city=${city ?? '-'}`)}>Save</button>
      <p id="saved">{saved}</p>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<Trip />);
