// react-select (npm): a form with two searchable selects and a Save button that shows the
// values the form's own state holds.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import Select from 'react-select';

const cities = ['Lisbon', 'Porto', 'Madrid', 'Paris'].map((c) => ({ value: c.toLowerCase(), label: c }));
const seats = ['Window', 'Aisle', 'Middle'].map((c) => ({ value: c.toLowerCase(), label: c }));

function Booking() {
  const [city, setCity] = useState(null);
  const [seat, setSeat] = useState(null);
  const [saved, setSaved] = useState('Nothing saved');
  return (
    <form onSubmit={(e) => { e.preventDefault(); setSaved(`Saved: city=${city?.value ?? '-'}, seat=${seat?.value ?? '-'}`); }}>
      <label id="city-label" htmlFor="city">Destination city</label>
      <Select inputId="city" aria-labelledby="city-label" options={cities} value={city} onChange={setCity} />
      <label id="seat-label" htmlFor="seat">Seat</label>
      <Select inputId="seat" aria-labelledby="seat-label" options={seats} value={seat} onChange={setSeat} />
      <button type="submit">Save</button>
      <p id="saved">{saved}</p>
    </form>
  );
}

createRoot(document.getElementById('root')).render(<Booking />);
