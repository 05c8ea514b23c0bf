// Downshift 9.5.0 (npm downshift, with react 18.3.1): the useSelect hook, headless — the page
// renders its own label, toggle button and list with the props the hook gives; Save shows the
// item its onSelectedItemChange gave.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useSelect } from 'downshift';

const drinks = ['Coffee', 'Juice', 'Lemonade', 'Tea', 'Water'];

function Order() {
  const [saved, setSaved] = useState('Nothing saved');
  const {
    isOpen, selectedItem, highlightedIndex, getToggleButtonProps, getLabelProps, getMenuProps, getItemProps,
  } = useSelect({ items: drinks });
  return (
    <div style={{ width: 280, position: 'relative' }}>
      <label {...getLabelProps()} style={{ display: 'block', marginTop: 12 }}>Drink</label>
      <div {...getToggleButtonProps()} style={{ border: '1px solid #999', padding: 6, cursor: 'pointer' }}>
        {selectedItem ?? 'Pick one'} ▾
      </div>
      <ul {...getMenuProps()} style={{ position: 'absolute', width: 268, background: 'white', listStyle: 'none', margin: 0, padding: isOpen ? 4 : 0, border: isOpen ? '1px solid #999' : 'none', zIndex: 1 }}>
        {isOpen && drinks.map((item, index) => (
          <li key={item} {...getItemProps({ item, index })} style={{ padding: 6, background: highlightedIndex === index ? '#def' : 'white' }}>{item}</li>
        ))}
      </ul>
      <button type="button" style={{ display: 'block', marginTop: 16 }} onClick={() => setSaved(`Saved: drink=${selectedItem ?? '-'}`)}>Save</button>
      <p id="saved">{saved}</p>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<Order />);
