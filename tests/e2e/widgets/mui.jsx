// MUI (npm): a Select and an Autocomplete in a form, and a Save button that shows the values
// the form's own state holds.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import FormControl from '@mui/material/FormControl';
import InputLabel from '@mui/material/InputLabel';
import Select from '@mui/material/Select';
import MenuItem from '@mui/material/MenuItem';
import Autocomplete from '@mui/material/Autocomplete';
import TextField from '@mui/material/TextField';
import Button from '@mui/material/Button';

const countries = ['Portugal', 'Spain', 'France', 'Italy'];

function Shipping() {
  const [size, setSize] = useState('');
  const [country, setCountry] = useState(null);
  const [saved, setSaved] = useState('Nothing saved');
  return (
    <div style={{ width: 320, display: 'grid', gap: 16 }}>
      <FormControl fullWidth>
        <InputLabel id="size-label">Parcel size</InputLabel>
        <Select labelId="size-label" label="Parcel size" value={size} onChange={(e) => setSize(e.target.value)}>
          <MenuItem value="small">Small</MenuItem>
          <MenuItem value="medium">Medium</MenuItem>
          <MenuItem value="large">Large</MenuItem>
        </Select>
      </FormControl>
      <Autocomplete options={countries} value={country} onChange={(e, v) => setCountry(v)}
        renderInput={(params) => <TextField {...params} label="Country" />} />
      <Button variant="contained" onClick={() => setSaved(`Saved: size=${size || '-'}, country=${country ?? '-'}`)}>Save</Button>
      <p id="saved">{saved}</p>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<Shipping />);
